//! `berth init bash|zsh|fish`: prints the few lines that put `berth prompt`'s
//! segment in the shell's prompt (docs/decisions/0027-the-prompt-segment.md).
//! They are meant for `eval "$(berth init bash)"` in the shell's start-up
//! file, and may run twice without adding the segment twice.

use std::path::Path;

use clap::{Args, ValueEnum};

use crate::context::Ctx;
use crate::output::{self, CliError};
use crate::placeholders;
use berth_install::shell_word;

/// A shell `berth init` knows.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// `eval "$(berth init bash)"` in ~/.bashrc.
    Bash,
    /// `eval "$(berth init zsh)"` in ~/.zshrc.
    Zsh,
    /// `berth init fish | source` in ~/.config/fish/config.fish.
    Fish,
}

/// Arguments of `berth init`.
#[derive(Args, Debug)]
pub struct InitArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
    /// The segment's template, as `berth prompt --format` takes it.
    #[arg(long, value_name = "FMT", default_value = "({name}{marker}) ")]
    pub format: String,
}

/// Runs `berth init`.
pub async fn cmd_init(ctx: &mut Ctx, args: InitArgs) -> Result<(), CliError> {
    if ctx.json {
        return Err(CliError::usage(
            "berth init prints shell code, so --json does not apply",
        ));
    }
    placeholders::fill(&args.format, &super::prompt::NAMES.map(|n| (n, "")))
        .map_err(|e| CliError::usage(e.0))?;
    // The program by absolute path, as `starship init` does: a prompt must
    // not depend on PATH being set up before it.
    let berth = std::env::current_exe()
        .map_err(|e| CliError::failed(format!("cannot find the berth program itself: {e}")))?;
    output::text(&script(args.shell, &berth, &args.format))
}

/// The shell code for `shell`, calling `berth` with `format`.
pub fn script(shell: Shell, berth: &Path, format: &str) -> String {
    match shell {
        Shell::Bash => format!(
            r#"# berth: the workspace of the current folder in the prompt (berth init bash)
__berth_prompt() {{
    local status=$?
    {berth} prompt --format {format} 2>/dev/null
    return "$status"
}}
case "$PS1" in
    *'$(__berth_prompt)'*) ;;
    *) PS1='$(__berth_prompt)'"$PS1" ;;
esac
"#,
            berth = shell_word(berth),
            format = shell_word(Path::new(format)),
        ),
        Shell::Zsh => format!(
            r#"# berth: the workspace of the current folder in the prompt (berth init zsh)
__berth_prompt_precmd() {{
    __berth_segment="$({berth} prompt --format {format} 2>/dev/null)"
    __berth_segment="${{__berth_segment//\%/%%}}"
}}
autoload -Uz add-zsh-hook
add-zsh-hook precmd __berth_prompt_precmd
setopt prompt_subst
case "$PROMPT" in
    *'${{__berth_segment}}'*) ;;
    *) PROMPT='${{__berth_segment}}'"$PROMPT" ;;
esac
"#,
            berth = shell_word(berth),
            format = shell_word(Path::new(format)),
        ),
        Shell::Fish => format!(
            r#"# berth: the workspace of the current folder in the prompt (berth init fish)
function __berth_status
    return $argv[1]
end
if not functions -q __berth_original_fish_prompt
    functions -c fish_prompt __berth_original_fish_prompt
    function fish_prompt
        set -l last $status
        printf '%s' ({berth} prompt --format {format} 2>/dev/null)
        __berth_status $last
        __berth_original_fish_prompt
    end
end
"#,
            berth = fish_word(&berth.to_string_lossy()),
            format = fish_word(format),
        ),
    }
}

/// A word for fish: single-quoted, where only `\` and `'` are escaped.
fn fish_word(s: &str) -> String {
    format!("'{}'", s.replace('\\', r"\\").replace('\'', r"\'"))
}
