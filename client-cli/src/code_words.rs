//! Which words of a command another program runs as code: the command string
//! of `sh -c` and the like, everything after `cmd /c` or `powershell
//! -Command`, what `ssh` hands to the remote shell, `env -S`'s string and an
//! interpreter's inline program (`python -c`, `node -e`, `perl -e`). `berth
//! exec` never fills a placeholder into such a word: a value pasted into code
//! is code, and a folder's name is chosen by whoever made the folder
//! (docs/decisions/0041-placeholders-are-data-never-code.md).
//!
//! Every word of the command is looked at as a program, not only the first,
//! so wrappers (`env`, `nice`, `timeout`, `xargs`, `busybox`) and paths
//! (`/bin/sh`, `C:\Windows\System32\cmd.exe`) need no list of their own. When
//! in doubt a word counts as code: a refusal costs a rewrite, a miss runs a
//! folder's name.

/// A word that a program runs as code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeWord {
    /// Its index in the command.
    pub index: usize,
    /// What runs it, as the command spells it: `sh -c`, `bash -lc`, `cmd /c`.
    pub runner: String,
    /// The language it is in, for the hint that shows the safe form.
    pub lang: Lang,
}

/// The language of a code word: how it reads an environment variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// A Unix shell (`sh`, `bash`, `zsh`, `fish`, ...).
    Shell,
    /// `cmd.exe`.
    Cmd,
    /// Windows PowerShell or `pwsh`.
    PowerShell,
    /// The remote shell of `ssh`, which does not get berth's variables.
    Remote,
    /// Python.
    Python,
    /// Node.js or Bun.
    JavaScript,
    /// Perl.
    Perl,
    /// Ruby.
    Ruby,
    /// PHP.
    Php,
}

impl Lang {
    /// How code in this language reads the environment variable `var`;
    /// `None` when the code does not see berth's environment.
    pub fn env_read(self, var: &str) -> Option<String> {
        Some(match self {
            Lang::Shell => format!("\"${var}\""),
            Lang::Cmd => format!("%{var}%"),
            Lang::PowerShell => format!("$env:{var}"),
            Lang::Remote => return None,
            Lang::Python => format!("os.environ[\"{var}\"]"),
            Lang::JavaScript => format!("process.env.{var}"),
            Lang::Perl => format!("$ENV{{{var}}}"),
            Lang::Ruby => format!("ENV[\"{var}\"]"),
            Lang::Php => format!("getenv(\"{var}\")"),
        })
    }
}

/// The words of `words` that a program among them runs as code, in order.
pub fn code_words<S: AsRef<str>>(words: &[S]) -> Vec<CodeWord> {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    let mut found: Vec<CodeWord> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let name = program_name(word);
        let rest = &words[i + 1..];
        let (lang, marks) = match runner(&name) {
            Some(Runner::Shell { fish }) => (Lang::Shell, shell(rest, fish)),
            Some(Runner::Cmd) => (Lang::Cmd, cmd(rest)),
            Some(Runner::PowerShell { bare_is_code }) => {
                (Lang::PowerShell, powershell(rest, bare_is_code))
            }
            Some(Runner::Ssh) => (Lang::Remote, ssh(rest)),
            Some(Runner::Inline(spec)) => (spec.lang, inline(rest, spec)),
            None => continue,
        };
        for (j, flag) in marks {
            let index = i + 1 + j;
            if index < words.len() && !found.iter().any(|c| c.index == index) {
                found.push(CodeWord {
                    index,
                    runner: format!("{name} {flag}"),
                    lang,
                });
            }
        }
    }
    found.sort_by_key(|c| c.index);
    found
}

/// A word's program name: its last path component, lower case, without
/// `.exe`.
fn program_name(word: &str) -> String {
    let base = word.rsplit(['/', '\\']).next().unwrap_or(word);
    let lower = base.to_ascii_lowercase();
    match lower.strip_suffix(".exe") {
        Some(stem) => stem.to_string(),
        None => lower,
    }
}

/// `name` is `stem`, or `stem` and a version (`python3.12`, `ksh93`).
fn is(name: &str, stem: &str) -> bool {
    name.strip_prefix(stem)
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

enum Runner {
    /// Runs the first operand after its options as code when one of them
    /// holds `c` (`-c`, `-lc`, `-ec`).
    Shell {
        fish: bool,
    },
    Cmd,
    /// `bare_is_code`: Windows PowerShell runs a bare first word as
    /// `-Command`; `pwsh` runs it as a script file.
    PowerShell {
        bare_is_code: bool,
    },
    Ssh,
    Inline(&'static Inline),
}

const SHELLS: [&str; 19] = [
    "sh", "ash", "bash", "dash", "ksh", "mksh", "oksh", "pdksh", "posh", "yash", "zsh", "csh",
    "tcsh", "rc", "nu", "xonsh", "elvish", "osh", "ysh",
];

fn runner(name: &str) -> Option<Runner> {
    if SHELLS.iter().any(|s| is(name, s)) {
        return Some(Runner::Shell { fish: false });
    }
    if is(name, "fish") {
        return Some(Runner::Shell { fish: true });
    }
    match name {
        "cmd" => return Some(Runner::Cmd),
        "powershell" => return Some(Runner::PowerShell { bare_is_code: true }),
        "pwsh" => {
            return Some(Runner::PowerShell {
                bare_is_code: false,
            });
        }
        "ssh" => return Some(Runner::Ssh),
        _ => {}
    }
    INLINE
        .iter()
        .find(|(stems, _)| stems.iter().any(|s| is(name, s)))
        .map(|(_, spec)| Runner::Inline(spec))
}

/// The long options that end a word's option scan early or take the next word.
fn long_option(word: &str) -> Option<(&str, bool)> {
    let long = word.strip_prefix("--").filter(|l| !l.is_empty())?;
    Some(match long.split_once('=') {
        Some((name, _)) => (name, true),
        None => (long, false),
    })
}

/// A shell: `sh [options] -c CODE [NAME [ARGS...]]`. Only CODE is code; the
/// words after it are `$0`, `$1`, ... and stay data. fish also takes
/// `-C CODE`, `--command CODE` and `--init-command CODE`.
fn shell(rest: &[&str], fish: bool) -> Vec<(usize, String)> {
    let mut marks = Vec::new();
    let mut flag: Option<&str> = None;
    let mut j = 0;
    while j < rest.len() {
        let w = rest[j];
        if w == "--" || w == "-" {
            j += 1;
            break;
        }
        if let Some((name, glued)) = long_option(w) {
            match name {
                "command" | "commands" | "init-command" => {
                    if glued {
                        marks.push((j, w.to_string()));
                    } else {
                        marks.push((j + 1, w.to_string()));
                        j += 1;
                    }
                }
                "rcfile" | "init-file" if !glued => j += 1,
                _ => {}
            }
            j += 1;
            continue;
        }
        if w.len() > 1 && (w.starts_with('-') || w.starts_with('+')) {
            let letters = &w[1..];
            if letters.contains('c') {
                flag = Some(w);
            }
            if fish && letters.contains('C') {
                marks.push((j + 1, w.to_string()));
                j += 1;
            }
            // `-o pipefail`, `-O extglob`: the next word is the option's.
            if letters.ends_with(['o', 'O']) {
                j += 1;
            }
            j += 1;
            continue;
        }
        break;
    }
    if let Some(flag) = flag {
        marks.push((j, flag.to_string()));
    }
    marks
}

/// `cmd [/s /q ...] /c CODE...`: cmd joins every word after `/c` (or `/k`,
/// `/r`) into one command line.
fn cmd(rest: &[&str]) -> Vec<(usize, String)> {
    for (j, w) in rest.iter().enumerate() {
        let lower = w.to_ascii_lowercase();
        if ["/c", "/k", "/r"].iter().any(|f| lower.starts_with(f)) {
            let flag = w[..2].to_string();
            let first = if w.len() > 2 { j } else { j + 1 };
            return (first..rest.len()).map(|k| (k, flag.clone())).collect();
        }
    }
    Vec::new()
}

/// PowerShell: every word after `-Command` (or `-c`, `-cwa`, or an
/// abbreviation of `-Command`) is joined into the command; `-File` makes
/// the rest a script's arguments.
fn powershell(rest: &[&str], bare_is_code: bool) -> Vec<(usize, String)> {
    const VALUED: [&str; 26] = [
        "executionpolicy",
        "ep",
        "ex",
        "windowstyle",
        "w",
        "configurationname",
        "config",
        "workingdirectory",
        "wd",
        "inputformat",
        "inp",
        "if",
        "outputformat",
        "o",
        "of",
        "psconsolefile",
        "version",
        "v",
        "settingsfile",
        "settings",
        "custompipename",
        "encodedcommand",
        "e",
        "ec",
        "encodedarguments",
        "ea",
    ];
    let all_from =
        |from: usize, flag: &str| (from..rest.len()).map(|k| (k, flag.to_string())).collect();
    let mut j = 0;
    while j < rest.len() {
        let w = rest[j];
        // `/Command` on Windows; a word with another slash is a path.
        let option = w
            .strip_prefix('-')
            .or_else(|| w.strip_prefix('/').filter(|o| !o.contains(['/', '\\'])));
        let Some(option) = option.map(str::to_ascii_lowercase) else {
            return if bare_is_code {
                all_from(j, "(its default -Command)")
            } else {
                Vec::new()
            };
        };
        let option = option.split(':').next().unwrap_or_default();
        let is_command = option == "c"
            || option == "cwa"
            || (option.len() >= 3
                && ("command".starts_with(option) || "commandwithargs".starts_with(option)));
        if is_command {
            return all_from(j + 1, w);
        }
        if option == "f" || (option.len() >= 2 && "file".starts_with(option)) {
            return Vec::new();
        }
        j += if VALUED.contains(&option) { 2 } else { 1 };
    }
    Vec::new()
}

/// `ssh [options] DESTINATION WORDS...`: ssh joins WORDS into one line that
/// the remote shell parses.
fn ssh(rest: &[&str]) -> Vec<(usize, String)> {
    const VALUED: &str = "BbcDEeFIiJLlmOoPpQRSWw";
    let mut j = 0;
    while j < rest.len() {
        let w = rest[j];
        if w == "--" {
            j += 1;
            break;
        }
        let Some(letters) = w.strip_prefix('-').filter(|l| !l.is_empty()) else {
            break;
        };
        let mut skip = false;
        for (k, ch) in letters.char_indices() {
            if VALUED.contains(ch) {
                skip = letters[k + ch.len_utf8()..].is_empty();
                break;
            }
        }
        j += if skip { 2 } else { 1 };
    }
    // rest[j] is the destination.
    (j + 1..rest.len())
        .map(|k| (k, "DESTINATION".to_string()))
        .collect()
}

/// How a program's options name its inline code.
struct Inline {
    lang: Lang,
    /// Short options whose argument is code.
    code: &'static str,
    /// The code may be glued to its option (`-e'print 1'`).
    glue_code: bool,
    /// Long options whose argument is code.
    long: &'static [&'static str],
    /// Short options with an argument, glued or the next word.
    takes: &'static str,
    /// Short options whose argument can only be glued (the rest of the word).
    glued: &'static str,
    /// Short options after which the words are another program's arguments.
    stops: &'static str,
    /// Long options with an argument.
    long_takes: &'static [&'static str],
    /// Options come anywhere, also after other words (`su USER -c CODE`).
    anywhere: bool,
    /// The first code ends the options (`python -c CODE ARGS...`).
    once: bool,
}

static INLINE: [(&[&str], Inline); 7] = [
    (
        &["python", "pypy"],
        Inline {
            lang: Lang::Python,
            code: "c",
            glue_code: true,
            long: &[],
            takes: "WX",
            glued: "",
            stops: "m",
            long_takes: &["check-hash-based-pycs"],
            anywhere: false,
            once: true,
        },
    ),
    (
        &["node", "nodejs", "bun"],
        Inline {
            lang: Lang::JavaScript,
            code: "ep",
            glue_code: false,
            long: &["eval", "print"],
            takes: "r",
            glued: "",
            stops: "",
            long_takes: &["require", "import", "loader", "experimental-loader"],
            anywhere: false,
            once: false,
        },
    ),
    (
        &["perl"],
        Inline {
            lang: Lang::Perl,
            code: "eE",
            glue_code: true,
            long: &[],
            takes: "",
            glued: "iIMmxl0dDCV",
            stops: "",
            long_takes: &[],
            anywhere: false,
            once: false,
        },
    ),
    (
        &["ruby"],
        Inline {
            lang: Lang::Ruby,
            code: "e",
            glue_code: true,
            long: &[],
            takes: "IrE",
            glued: "x0lWTKF",
            stops: "",
            long_takes: &[],
            anywhere: false,
            once: false,
        },
    ),
    (
        &["php"],
        Inline {
            lang: Lang::Php,
            code: "rBRE",
            glue_code: true,
            long: &[],
            takes: "cdzt",
            glued: "",
            stops: "f",
            long_takes: &[],
            anywhere: false,
            once: false,
        },
    ),
    (
        &["su", "runuser"],
        Inline {
            lang: Lang::Shell,
            code: "c",
            glue_code: true,
            long: &["command", "session-command"],
            takes: "sgG",
            glued: "",
            stops: "",
            long_takes: &["shell", "group", "supp-group"],
            anywhere: true,
            once: false,
        },
    ),
    (
        // `env -S STRING` splits STRING into a command of its own.
        &["env"],
        Inline {
            lang: Lang::Shell,
            code: "S",
            glue_code: true,
            long: &["split-string"],
            takes: "uC",
            glued: "",
            stops: "",
            long_takes: &["unset", "chdir"],
            anywhere: false,
            once: false,
        },
    ),
];

fn inline(rest: &[&str], spec: &Inline) -> Vec<(usize, String)> {
    let mut marks = Vec::new();
    let mut j = 0;
    while j < rest.len() {
        let w = rest[j];
        if let Some((name, glued)) = long_option(w) {
            if spec.long.contains(&name) {
                if glued {
                    marks.push((j, w.to_string()));
                } else {
                    marks.push((j + 1, w.to_string()));
                    j += 1;
                }
                if spec.once {
                    break;
                }
            } else if spec.long_takes.contains(&name) && !glued {
                j += 1;
            }
            j += 1;
            continue;
        }
        let Some(letters) = w.strip_prefix('-').filter(|l| !l.is_empty() && *l != "-") else {
            if spec.anywhere {
                j += 1;
                continue;
            }
            break;
        };
        let mut skip_next = false;
        let mut stop = false;
        for (k, ch) in letters.char_indices() {
            let after = &letters[k + ch.len_utf8()..];
            if spec.code.contains(ch) {
                if spec.glue_code && !after.is_empty() {
                    marks.push((j, format!("-{ch}")));
                    break;
                }
                marks.push((j + 1, format!("-{ch}")));
                skip_next = true;
                stop = spec.once;
                if spec.glue_code {
                    break;
                }
            } else if spec.takes.contains(ch) {
                skip_next |= after.is_empty();
                break;
            } else if spec.glued.contains(ch) {
                break;
            } else if spec.stops.contains(ch) {
                stop = true;
                break;
            }
        }
        if stop {
            break;
        }
        j += if skip_next { 2 } else { 1 };
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The indices of the code words of a command written as one string.
    fn code(command: &str) -> Vec<usize> {
        let words: Vec<&str> = command.split(' ').collect();
        code_words(&words).iter().map(|c| c.index).collect()
    }

    #[test]
    fn code_words_are_found() {
        let cases: &[(&str, &[usize])] = &[
            // sh c
            ("sh -c CODE", &[2]),
            // words after the code are its arguments
            ("sh -c CODE name ARG", &[2]),
            // a combined flag
            ("bash -lc CODE", &[2]),
            // another combined flag
            ("dash -ec CODE", &[2]),
            // flags after c
            ("bash -c -e CODE", &[3]),
            // an option with its value
            ("bash -o pipefail -c CODE", &[4]),
            // shopt
            ("bash -O extglob -c CODE", &[4]),
            // plus flags
            ("zsh +x -c CODE", &[3]),
            // by path
            ("/bin/sh -c CODE", &[2]),
            // a windows path
            ("C:\\Git\\bin\\bash.exe -c CODE", &[2]),
            // a versioned shell
            ("ksh93 -c CODE", &[2]),
            // behind env
            ("env FOO=1 sh -c CODE", &[4]),
            // behind env i
            ("env -i -u X /usr/bin/bash -c CODE", &[6]),
            // behind other wrappers
            ("timeout 5 nice -n 3 sh -c CODE", &[7]),
            // busybox
            ("busybox sh -c CODE", &[3]),
            // fish
            ("fish -c CODE", &[2]),
            // fish long
            ("fish --command CODE", &[2]),
            // fish long glued
            ("fish --command=CODE", &[1]),
            // fish init
            ("fish -C CODE -c CODE2", &[2, 4]),
            // zsh
            ("zsh -c CODE", &[2]),
            // csh
            ("tcsh -c CODE", &[2]),
            // a script is a file not code
            ("sh script.sh ARG", &[]),
            // c after the script is the scripts
            ("bash script.sh -c ARG", &[]),
            // stdin
            ("bash -s ARG", &[]),
            // cmd
            ("cmd /c CODE MORE", &[2, 3]),
            // cmd upper
            ("CMD.EXE /S /C CODE", &[3]),
            // cmd k
            ("cmd /k CODE", &[2]),
            // cmd glued
            ("cmd /cCODE", &[1]),
            // powershell
            ("powershell -Command CODE MORE", &[2, 3]),
            // powershell abbreviated
            ("powershell -NoProfile -comm CODE", &[3]),
            // powershell bare
            ("powershell -NoProfile CODE", &[2]),
            // powershell valued
            ("powershell -ExecutionPolicy Bypass -c CODE", &[4]),
            // powershell file
            ("powershell -File script.ps1 ARG", &[]),
            // pwsh c
            ("pwsh -c CODE", &[2]),
            // pwsh bare is a file
            ("pwsh script.ps1 ARG", &[]),
            // pwsh valued
            ("pwsh -wd /x -Command CODE", &[4]),
            // ssh
            ("ssh host CODE MORE", &[2, 3]),
            // ssh options
            ("ssh -p 22 -tt user@host CODE", &[5]),
            // python
            ("python3 -c CODE ARG", &[2]),
            // python glued
            ("python -cCODE", &[1]),
            // python combined
            ("python3.12 -Ic CODE", &[2]),
            // python module
            ("python -m mod -c ARG", &[]),
            // python script
            ("python run.py -c ARG", &[]),
            // node
            ("node -e CODE", &[2]),
            // node print eval
            ("node -pe CODE", &[2]),
            // node long
            ("node --eval=CODE", &[1]),
            // node script
            ("node server.js -e ARG", &[]),
            // perl
            ("perl -ne CODE FILE", &[2]),
            // perl twice
            ("perl -e CODE -e CODE2", &[2, 4]),
            // perl glued
            ("perl -i.bak -pe CODE", &[3]),
            // ruby
            ("ruby -e CODE", &[2]),
            // php
            ("php -r CODE", &[2]),
            // su
            ("su nobody -c CODE", &[3]),
            // env split
            ("env -S CODE", &[2]),
            // env split glued
            ("env -SCODE", &[1]),
            // plain programs
            ("basic-memory mcp --project NAME", &[]),
            // uvx
            ("uvx some-server --dir DIR", &[]),
            // npx
            ("npx -y @scope/server DIR", &[]),
            // a shell named as data
            ("grep -c bash FILE", &[]),
        ];
        for (command, want) in cases {
            assert_eq!(code(command), *want, "{command}");
        }
    }

    #[test]
    fn the_runner_is_named_as_the_command_spells_it() {
        let words = ["/usr/bin/env", "bash", "-lc", "CODE"];
        let found = code_words(&words);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].runner, "bash -lc");
        assert_eq!(found[0].lang, Lang::Shell);
        let found = code_words(&["cmd.exe", "/C", "x"]);
        assert_eq!(found[0].runner, "cmd /C");
        assert_eq!(
            Lang::Cmd.env_read("BERTH_PROJECT").unwrap(),
            "%BERTH_PROJECT%"
        );
        assert_eq!(
            Lang::PowerShell.env_read("BERTH_HOME").unwrap(),
            "$env:BERTH_HOME"
        );
        assert!(Lang::Remote.env_read("BERTH_HOME").is_none());
    }
}
