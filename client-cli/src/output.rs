//! Output and errors. Main output goes to stdout; errors, notes and hints to
//! stderr. `--json` prints exactly one document on stdout. A broken pipe is
//! not an error.

use std::io::Write;

use berth_client::client::ClientError;
use berth_vocab::text::escaped;

/// A command's failure: a message, optional hints, and the exit code.
#[derive(Debug)]
pub struct CliError {
    message: String,
    hints: Vec<String>,
    code: u8,
}

impl CliError {
    /// Refused or failed: exit 1.
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            hints: Vec::new(),
            code: 1,
        }
    }

    /// A usage error: exit 2.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            hints: Vec::new(),
            code: 2,
        }
    }

    /// A failure with its own exit code (126 and 127 for a command that
    /// cannot run, as shells say it).
    pub fn exit(code: u8, message: impl Into<String>) -> CliError {
        CliError {
            message: message.into(),
            hints: Vec::new(),
            code,
        }
    }

    /// Adds a hint line.
    pub fn hint(mut self, hint: impl Into<String>) -> CliError {
        self.hints.push(hint.into());
        self
    }

    /// Prints the error to stderr and gives the exit code. Messages are one
    /// line that quotes paths and names as they came: escaped whole here.
    pub fn report(self) -> u8 {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "Error: {}", escaped(&self.message));
        for h in &self.hints {
            let _ = writeln!(err, "Hint: {}", escaped(h));
        }
        self.code
    }
}

impl From<ClientError> for CliError {
    /// The daemon's message, and its hints as `Hint:` lines.
    fn from(e: ClientError) -> Self {
        CliError {
            hints: e.hints(),
            ..CliError::failed(e.to_string())
        }
    }
}

/// Prints a JSON document on stdout.
pub fn json(value: &serde_json::Value) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    let text = serde_json::to_string_pretty(value).expect("JSON values serialise");
    write_ok(writeln!(out, "{text}"))
}

/// Prints text on stdout.
pub fn text(s: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    write_ok(out.write_all(s.as_bytes()))
}

/// Prints a note on stderr, escaped (a note quotes paths as they came).
pub fn note(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "note: {}", escaped(s));
}

/// Prints a warning on stderr, escaped (a warning quotes paths as they came).
pub fn warning(s: &str) {
    let _ = writeln!(std::io::stderr().lock(), "warning: {}", escaped(s));
}

fn write_ok(r: std::io::Result<()>) -> Result<(), CliError> {
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(CliError::failed(format!("writing output: {e}"))),
    }
}

/// An empty string as JSON null.
pub fn nullable(s: &str) -> serde_json::Value {
    if s.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::Value::String(s.to_string())
    }
}

/// Whether colour may be used on stdout: a terminal, and no `NO_COLOR`.
pub fn color() -> bool {
    use std::io::IsTerminal;
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// Bold when colour is on.
pub fn bold(s: &str) -> String {
    if color() {
        format!("\x1b[1m{s}\x1b[0m")
    } else {
        s.to_string()
    }
}
