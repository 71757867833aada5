//! berth-install: registering berth with coding clients (`berth install`, `uninstall`, and the
//! registration checks of `berth doctor`): which files each client reads,
//! what berth puts in them, and how it changes them without disturbing
//! anything else (docs/decisions/0008-registering-clients.md).
//!
//! `clients` says, per client, which files and entries; `json` and `toml`
//! edit one document each (pure: text in, text out), `jsonc` keeping a JSON
//! file's every byte outside berth's entries and judging it by the rule of
//! the client that reads it; `files` plans, backs up
//! and writes, reaching each file through its `place` (a project's beneath
//! the project folder, through no link); `folders` records the folders install creates, so
//! uninstall removes them once they are empty again. Where the files live comes from
//! [`Locations`], built from the process environment at one place so tests can point it into a
//! temp dir.
// Tests write files freely; the product code replaces one only through `atomic` (clippy.toml).
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod audit;
pub mod clients;
pub mod files;
pub mod folders;
pub mod json;
pub mod jsonc;
pub mod place;
pub mod toml;

use std::path::{Path, PathBuf};

/// A client berth can register with.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    /// Claude Code: `~/.claude.json` and `~/.claude/settings.json`.
    ClaudeCode,
    /// OpenAI Codex: `~/.codex/config.toml` and `~/.codex/hooks.json`.
    Codex,
    /// VS Code (Copilot agent mode): the user `mcp.json`; hooks in `~/.claude/settings.json`.
    Vscode,
    /// Cursor: `~/.cursor/mcp.json` and `~/.cursor/hooks.json`.
    Cursor,
    /// Claude Desktop: `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cline (VS Code extension): `cline_mcp_settings.json`.
    Cline,
    /// GitHub Copilot CLI: `~/.copilot/mcp-config.json` and `~/.copilot/hooks/berth.json`.
    CopilotCli,
}

impl Client {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::Vscode => "vscode",
            Client::Cursor => "cursor",
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cline => "cline",
            Client::CopilotCli => "copilot-cli",
        }
    }
}

/// Where a registration goes.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The user's own configuration: every project.
    #[default]
    User,
    /// The project in the current directory (files a team may commit).
    Project,
}

/// The operating system whose conventions decide the config folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and other Unix-likes: XDG folders.
    Linux,
    /// macOS: `~/Library/Application Support`.
    Mac,
    /// Windows: `%APPDATA%`.
    Windows,
}

/// The environment that decides where client config files live. Built once
/// from the process ([`Locations::from_process`]); everything else takes it
/// as data.
#[derive(Debug, Clone)]
pub struct Locations {
    /// `$HOME` (`%USERPROFILE%` on Windows).
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, when set and absolute.
    pub xdg_config_home: Option<PathBuf>,
    /// `%APPDATA%` (Windows).
    pub appdata: Option<PathBuf>,
    /// `$CODEX_HOME` (Codex's own override of `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR` (Claude Code's own override of `~/.claude`).
    pub claude_config_dir: Option<PathBuf>,
    /// The project folder for `--scope project`: the current directory.
    pub cwd: PathBuf,
    /// The platform.
    pub os: Os,
}

impl Locations {
    /// Reads the process environment.
    pub fn from_process() -> Result<Locations, String> {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let os = if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        };
        // Windows' home is USERPROFILE (HOME, where set, is Git's shells'), as berth's own.
        let home = if os == Os::Windows {
            var("USERPROFILE").or_else(|| var("HOME"))
        } else {
            var("HOME").or_else(|| var("USERPROFILE"))
        };
        let home = home.ok_or(
            "HOME is not set to an absolute path, so the clients' config files cannot be found",
        )?;
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?;
        Ok(Locations {
            home,
            xdg_config_home: var(berth_client::paths::XDG_CONFIG_HOME),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            cwd,
            os,
        })
    }

    /// The platform's per-user application config folder: `%APPDATA%`,
    /// `~/Library/Application Support`, or `$XDG_CONFIG_HOME` (else `~/.config`).
    pub fn app_config_dir(&self) -> PathBuf {
        match self.os {
            Os::Windows => self
                .appdata
                .clone()
                .unwrap_or_else(|| self.home.join("AppData").join("Roaming")),
            Os::Mac => self.home.join("Library").join("Application Support"),
            Os::Linux => self
                .xdg_config_home
                .clone()
                .unwrap_or_else(|| self.home.join(".config")),
        }
    }

    /// VS Code's user folder (`.../Code/User`).
    pub fn vscode_user_dir(&self) -> PathBuf {
        self.app_config_dir().join("Code").join("User")
    }
}

/// The programs a registration names: absolute paths.
#[derive(Debug, Clone)]
pub struct Programs {
    /// `berth-mcp`.
    pub mcp: PathBuf,
    /// `berth-hook`.
    pub hook: PathBuf,
}

impl Programs {
    /// Finds `berth-mcp` and `berth-hook`: beside the running `berth` first,
    /// then on `PATH`.
    pub fn find() -> Result<Programs, String> {
        Ok(Programs {
            mcp: find_program("berth-mcp")?,
            hook: find_program("berth-hook")?,
        })
    }
}

fn find_program(name: &str) -> Result<PathBuf, String> {
    // `berth-mcp.exe` on Windows.
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().ok();
    let beside = exe
        .as_deref()
        .and_then(Path::parent)
        .map(|d| d.join(&file))
        .filter(|p| p.is_file());
    if let Some(p) = beside {
        return Ok(p);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(&file))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "cannot find {name}: looked beside {} and on PATH; install it (cargo install --path {})",
                exe.as_deref()
                    .and_then(Path::parent)
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|| "berth".into()),
                if name == "berth-mcp" { "mcp-shim" } else { "hook-shim" }
            )
        })
}

/// A path as a hook command word: bare when it needs no quoting for a POSIX
/// shell, else single-quoted.
pub fn shell_word(p: &Path) -> String {
    let s = p.to_string_lossy();
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        s.into_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `p` as one PowerShell word after its call operator: `& 'C:\\x\\berth-hook.exe' args`
/// (single quotes, a quote inside doubled).
pub fn powershell_call(p: &Path) -> String {
    format!("& '{}'", p.to_string_lossy().replace('\'', "''"))
}

/// Whether a hook command runs berth's hook program: its first word, unquoted,
/// is a path whose file name is `berth-hook` (after PowerShell's `&`).
pub fn is_berth_hook_command(command: &str) -> bool {
    let first = command.trim_start();
    let first = first.strip_prefix("& ").map_or(first, str::trim_start);
    let word = if let Some(rest) = first.strip_prefix('\'') {
        rest.split('\'').next().unwrap_or("")
    } else if let Some(rest) = first.strip_prefix('"') {
        rest.split('"').next().unwrap_or("")
    } else {
        first.split_whitespace().next().unwrap_or("")
    };
    let name = word.rsplit(['/', '\\']).next().unwrap_or("");
    name == "berth-hook" || name == "berth-hook.exe"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_powershell_call_is_quoted_and_still_recognised_as_berths_hook() {
        let call = powershell_call(Path::new(r"C:\Users\o'neil\berth-hook.exe"));
        assert_eq!(call, r"& 'C:\Users\o''neil\berth-hook.exe'");
        assert!(is_berth_hook_command(&format!(
            "{} session-start",
            powershell_call(Path::new(r"C:\bin\berth-hook.exe"))
        )));
        assert!(!is_berth_hook_command("& 'C:\\bin\\other.exe' x"));
    }

    #[test]
    fn plain_paths_stay_bare_and_others_are_quoted() {
        assert_eq!(
            shell_word(Path::new("/usr/bin/berth-hook")),
            "/usr/bin/berth-hook"
        );
        assert_eq!(
            shell_word(Path::new("/home/a b/it's/berth-hook")),
            r"'/home/a b/it'\''s/berth-hook'"
        );
    }

    #[test]
    fn berth_hook_commands_are_recognised_by_their_program() {
        assert!(is_berth_hook_command("/x/berth-hook session-start"));
        assert!(is_berth_hook_command(
            "'/a b/berth-hook' stop --client codex"
        ));
        assert!(is_berth_hook_command("berth-hook stop"));
        assert!(!is_berth_hook_command("/x/other-hook stop"));
        assert!(!is_berth_hook_command("echo berth-hook"));
    }
}
