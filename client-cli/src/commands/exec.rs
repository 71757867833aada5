//! `berth exec [--cwd DIR] [--workspace NAME] -- CMD [ARGS...]`: resolves a
//! directory once, as an agent session would, and runs CMD in this very
//! process with the answer in its environment and arguments, so an editor's
//! pipes reach CMD directly (docs/decisions/0026-berth-exec.md). With
//! `--roots home|project`, CMD runs behind berth's roots relay instead
//! (docs/decisions/0051-a-roots-relay-for-wrapped-servers.md).

use std::ffi::OsString;
use std::path::PathBuf;

use berth_client::client::Connection;
use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};
use crate::relay::{self, RootsFrom};
use crate::{code_words, placeholders};

/// Arguments of `berth exec`.
#[derive(Args, Debug)]
pub struct ExecArgs {
    /// The directory to resolve; default: `BERTH_CWD`, else
    /// `CLAUDE_PROJECT_DIR`, else the current directory. CMD still starts in
    /// the current directory.
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Use this workspace (reason `argument`).
    #[arg(long, short, value_name = "NAME")]
    pub workspace: Option<String>,
    /// Run CMD behind berth's roots relay: an MCP server that asks the
    /// client for its roots gets the workspace's home (`home`) or the
    /// project folder (`project`, the home without a project) instead, and
    /// every other message passes unchanged. `client` leaves the roots
    /// exchange to the client, as without the flag.
    #[arg(long, value_enum, value_name = "FROM")]
    pub roots: Option<RootsFrom>,
    /// The command and its arguments. `{workspace}`, `{home}` and `{project}`
    /// in them are replaced; `{{` and `}}` are literal braces.
    #[arg(required = true, trailing_var_arg = true, value_name = "CMD")]
    pub command: Vec<OsString>,
}

/// The placeholders, in the order error messages list them.
pub const NAMES: [&str; 3] = ["workspace", "home", "project"];

/// The variable that carries each placeholder's value to CMD.
const VARIABLES: [(&str, &str); 3] = [
    ("workspace", "BERTH_WORKSPACE"),
    ("home", "BERTH_HOME"),
    ("project", "BERTH_PROJECT"),
];

/// Checks CMD's words before anything runs (usage errors): every template is
/// well formed, and no placeholder is in a word that a program runs as code,
/// where a folder's name would become a command
/// (docs/decisions/0041-placeholders-are-data-never-code.md). `install
/// --exec` checks the same, so the user learns it at install time.
pub fn check_command(words: &[OsString]) -> Result<(), CliError> {
    let blank = NAMES.map(|n| (n, ""));
    for word in words {
        fill_word(word, &blank)?;
    }
    let shown: Vec<String> = words
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    for code in code_words::code_words(&shown) {
        let word = &shown[code.index];
        let names = placeholders::names_in(word, &NAMES).map_err(|e| CliError::usage(e.0))?;
        if let Some(name) = names.first() {
            return Err(placeholder_in_code(word, name, &code));
        }
    }
    Ok(())
}

/// The refusal of `{name}` in `word`, which `code.runner` runs as code, with
/// the safe forms: the variable read by that code, or (in a shell) an
/// argument of its own.
fn placeholder_in_code(word: &str, name: &str, code: &code_words::CodeWord) -> CliError {
    let var = VARIABLES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("BERTH_WORKSPACE", |(_, v)| *v);
    let mut e = CliError::usage(format!(
        "{word:?} is code that `{}` runs, so berth does not fill {{{name}}} into it: the value would become part of the code, and a folder named to hold a command would run it. Placeholders fill data only",
        code.runner
    ));
    e = match code.lang.env_read(var) {
        Some(read) => e.hint(format!(
            "read the value from the environment, which berth exec sets for the command: {read} ({} hold the workspace, its home, the project and the reason)",
            "BERTH_WORKSPACE, BERTH_HOME, BERTH_PROJECT and BERTH_REASON"
        )),
        None => e.hint(format!(
            "{} hands these words to another machine's shell, which does not get berth's environment; run berth exec on that machine instead",
            code.runner
        )),
    };
    if code.lang == code_words::Lang::Shell {
        e = e.hint(format!(
            "e.g. sh -c 'echo starting in \"${var}\"', or pass the value as an argument of its own, which stays data: sh -c 'echo starting in \"$1\"' sh {{{name}}}"
        ));
    }
    e
}

/// Runs `berth exec`. On success it does not return: CMD replaces berth.
pub async fn cmd_exec(ctx: &mut Ctx, args: ExecArgs) -> Result<(), CliError> {
    if ctx.json {
        return Err(CliError::usage(
            "berth exec leaves stdout to the command it runs, so --json does not apply",
        ));
    }
    // A bad template is refused before the daemon is asked anything.
    check_command(&args.command)?;
    let program = args.command[0].to_string_lossy().into_owned();
    ensure_daemon(ctx).await?;
    let path = super::path_arg(directory(args.cwd), "the directory")?;
    // The daemon makes the home ready in the same call: CMD finds a folder at its path.
    let r = super::resolve_as_agent(ctx, path, args.workspace.unwrap_or_default(), true).await?;
    refuse_a_default(&r, &program)?;
    let home = home_of(&r)?;
    for n in &r.notes {
        output::note(n);
    }
    let values = [
        ("workspace", r.workspace.as_str()),
        ("home", home),
        ("project", r.project.as_str()),
    ];
    let words = args
        .command
        .iter()
        .map(|w| fill_word(w, &values))
        .collect::<Result<Vec<_>, _>>()?;
    let env = [
        ("BERTH_WORKSPACE", r.workspace.as_str()),
        ("BERTH_HOME", home),
        ("BERTH_PROJECT", r.project.as_str()),
        ("BERTH_REASON", r.reason.as_str()),
    ];
    let root = match args.roots {
        None | Some(RootsFrom::Client) => return run(&words, &env),
        Some(RootsFrom::Project) if !r.project.is_empty() => {
            let name = std::path::Path::new(&r.project)
                .file_name()
                .map_or(r.project.clone(), |n| n.to_string_lossy().into_owned());
            relay::root(std::path::Path::new(&r.project), &name)
        }
        Some(from) => {
            if from == RootsFrom::Project {
                output::note(&format!(
                    "{} is in no project, so {program}'s root is workspace {}'s home",
                    r.directory, r.workspace
                ));
            }
            relay::root(std::path::Path::new(home), &r.workspace)
        }
    };
    match relay::run(&words, &env, &[root]).await {
        // The relay flushed the server's last line; a reader of the client's
        // stdin may still run, and ends with the process.
        Ok(code) => std::process::exit(code),
        Err(e) => Err(cannot_start(&words[0], &e)),
    }
}

/// The directory to resolve, when it is not the caller's own (which
/// `Ctx::caller` forwards, `BERTH_CWD` first): `--cwd`, else Claude Code's
/// `CLAUDE_PROJECT_DIR` unless `BERTH_CWD` overrides it, as `berth-mcp`
/// chooses.
fn directory(cwd: Option<PathBuf>) -> Option<PathBuf> {
    let set = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    cwd.or_else(|| match set("BERTH_CWD") {
        Some(_) => None,
        None => set("CLAUDE_PROJECT_DIR").map(PathBuf::from),
    })
}

/// Starts the daemon through `berth daemon start` when none runs, so that
/// it is the child of that short-lived process and never of CMD: a program
/// that waits for its children (a shell's `wait`) must not wait for berthd.
async fn ensure_daemon(ctx: &Ctx) -> Result<(), CliError> {
    if Connection::open_existing(&ctx.env).await?.is_some() {
        return Ok(());
    }
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the berth program itself: {e}")))?;
    // stdout may be an MCP client's pipe: the start's report goes nowhere.
    let started = std::process::Command::new(exe)
        .args(["daemon", "start"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .status()
        .map_err(|e| CliError::failed(format!("cannot run `berth daemon start`: {e}")))?;
    if started.success() {
        Ok(())
    } else {
        Err(
            CliError::failed("the daemon could not be started (the error is above)")
                .hint("run `berth daemon start` to see why"),
        )
    }
}

/// Refuses an answer that only the device's active workspace gave: nothing
/// chose a workspace for this directory, and the wrapped program would
/// quietly write into whatever is active.
fn refuse_a_default(r: &pb::Resolution, program: &str) -> Result<(), CliError> {
    if r.reason != "active" {
        return Ok(());
    }
    let mut e = CliError::failed(format!(
        "nothing chose a workspace for {}: only the device's active workspace, {}, would apply, so {program} was not started",
        r.directory, r.workspace
    ));
    if !r.proposal.is_empty() {
        e = e.hint(format!(
            "{} proposes workspace {}; to approve it, run `berth workspace use {}` in {}",
            r.project_file, r.proposal, r.proposal, r.project
        ));
    } else if !r.project.is_empty() {
        e = e.hint(format!(
            "to approve a workspace for this project: run `berth workspace use NAME` in {}",
            r.project
        ));
    }
    Err(e
        .hint("to pin one in the registration: `berth exec --workspace NAME -- ...`")
        .hint("to choose the workspace of every unassigned agent session: `berth setting set workspace.unassigned NAME`"))
}

/// The workspace's home, which the daemon opened (and, for a managed one, made) as its file
/// tools would. A daemon of this version that predates `open_home` names none.
fn home_of(r: &pb::Resolution) -> Result<&str, CliError> {
    if r.home.is_empty() {
        return Err(CliError::failed(format!(
            "the running berthd did not make workspace {}'s home ready: it is older than this berth",
            r.workspace
        ))
        .hint("restart it with `berth daemon stop`; the next berth command starts the new one"));
    }
    Ok(&r.home)
}

/// One word of the command with its placeholders filled. A word that is not
/// UTF-8 passes through unchanged when it holds no brace.
fn fill_word(word: &OsString, values: &[(&str, &str)]) -> Result<OsString, CliError> {
    match word.to_str() {
        Some(s) => placeholders::fill(s, values)
            .map(OsString::from)
            .map_err(|e| CliError::usage(e.0)),
        None if !word
            .as_encoded_bytes()
            .iter()
            .any(|b| matches!(b, b'{' | b'}')) =>
        {
            Ok(word.clone())
        }
        None => Err(CliError::usage(format!(
            "{} is not valid UTF-8 and holds a brace; berth fills placeholders in UTF-8 words only",
            word.to_string_lossy()
        ))),
    }
}

/// Replaces this process with the command (Unix), or runs it and exits with
/// its code. Only a command that cannot start comes back, as an error with
/// the shells' codes: 127 when it is not found, 126 when it cannot run.
fn run(words: &[OsString], env: &[(&str, &str)]) -> Result<(), CliError> {
    let program = &words[0];
    let mut cmd = std::process::Command::new(program);
    cmd.args(&words[1..]);
    cmd.envs(env.iter().copied());
    #[cfg(unix)]
    let e = {
        use std::os::unix::process::CommandExt;
        cmd.exec()
    };
    #[cfg(not(unix))]
    let e = match cmd.status() {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => e,
    };
    Err(cannot_start(program, &e))
}

/// The error for a command that could not start, with the shells' codes:
/// 127 when it is not found, 126 when it cannot run.
fn cannot_start(program: &std::ffi::OsStr, e: &std::io::Error) -> CliError {
    let shown = program.to_string_lossy();
    if e.kind() == std::io::ErrorKind::NotFound {
        // A path (on Windows `\` separates too) names a file, not a command to look up.
        let looked = if shown.chars().any(std::path::is_separator) {
            "no such file"
        } else {
            "no such command on PATH"
        };
        CliError::exit(127, format!("cannot run {shown}: {looked}"))
            .hint("check the command's name, or give its absolute path")
    } else {
        CliError::exit(126, format!("cannot run {shown}: {e}"))
            .hint("check that it is an executable file")
    }
}
