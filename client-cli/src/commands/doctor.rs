//! `berth doctor`: a checklist, one line per check (ok, problem, or unknown
//! when it cannot be known), each problem followed by what fixes it. Exit 1
//! when any check found a problem (docs/decisions/0028-berth-doctor.md).
//!
//! It connects the way every client does (starting the daemon when none
//! runs); the daemon's own state (the database's integrity, where it logs)
//! comes through one read-only request, `Diagnose`; everything else is read
//! here without writing anything: the data folder's owner and modes (on Unix), each
//! registered client's files planned by `berth install` as a dry run, the
//! environment each client gives berth's server, Codex's record of hook
//! approvals, and the inotify watches in use.
//!
//! `--json`: `{"ok", "checks": [{"name", "status", "ok", "detail", "fix"}]}`,
//! `status` one of `ok`, `problem`, `unknown`; `fix` null when none.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use berth_client::client::{ClientError, Connection};
use berth_client::ownership;
use berth_client::paths::{self, EnvCtx, Uid};
use berth_proto::pb;
use berth_proto::versions::compare_versions;
use berth_vocab::text::escaped;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};
use berth_install::audit::{self, HookTrust, Inherits, Standing};
use berth_install::{Locations, Programs, Scope};

/// Arguments of `berth doctor`.
#[derive(Args, Debug)]
pub struct DoctorArgs {}

/// A check's outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    Problem,
    /// Cannot be known from here; said so, not guessed.
    Unknown,
}

/// One line of the checklist.
#[derive(Debug, Clone)]
struct Check {
    name: String,
    status: Status,
    detail: String,
    fix: Option<String>,
    /// Keys a check adds to its JSON object (the client checks' `registration`).
    more: serde_json::Map<String, serde_json::Value>,
}

impl Check {
    /// The check with `key` added to its JSON object.
    fn with(mut self, key: &str, value: serde_json::Value) -> Check {
        self.more.insert(key.into(), value);
        self
    }
}

fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status: Status::Ok,
        detail: detail.into(),
        fix: None,
        more: Default::default(),
    }
}

fn problem(name: impl Into<String>, detail: impl Into<String>, fix: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status: Status::Problem,
        detail: detail.into(),
        fix: Some(fix.into()),
        more: Default::default(),
    }
}

fn unknown(name: impl Into<String>, detail: impl Into<String>) -> Check {
    Check {
        name: name.into(),
        status: Status::Unknown,
        detail: detail.into(),
        fix: None,
        more: Default::default(),
    }
}

/// Runs `berth doctor`.
pub async fn cmd_doctor(ctx: &mut Ctx, _: DoctorArgs) -> Result<(), CliError> {
    let mut checks = Vec::new();
    let daemon = daemon_checks(&ctx.env, &mut checks).await;
    let data_dir = daemon
        .as_ref()
        .map(|d| PathBuf::from(&d.status.data_dir))
        .or_else(|| paths::data_dir(&ctx.env).ok());
    match &data_dir {
        Some(dir) => {
            checks.push(data_folder_check(dir, ctx.env.uid));
            checks.push(database_file_check(dir, ctx.env.uid));
        }
        None => checks.push(problem(
            "data folder",
            format!(
                "no data folder can be derived: neither {} nor HOME is set",
                paths::BERTH_DATA_DIR
            ),
            format!(
                "set HOME (or {}) and run berth doctor again",
                paths::BERTH_DATA_DIR
            ),
        )),
    }
    let diagnosis = daemon.as_ref().and_then(|d| d.diagnosis.as_ref());
    checks.push(match (&daemon, diagnosis) {
        (_, Some(d)) if d.integrity == ["ok"] => ok("database integrity", "quick_check: ok"),
        (_, Some(d)) => problem(
            "database integrity",
            format!("quick_check found: {}", d.integrity.join("; ")),
            format!(
                "berth daemon stop, then move the database aside (mv {db} {db}.bad) and restore a backup, or start over with an empty registry",
                db = d.database
            ),
        ),
        (Some(d), None) => unknown(
            "database integrity",
            format!("not checked: {}", d.why_no_diagnosis),
        ),
        (None, None) => unknown("database integrity", "not checked: the daemon cannot be reached"),
    });
    checks.push(inotify_check(daemon.as_ref().map(|d| d.status.watches)));
    checks.push(log_check(&ctx.env, diagnosis));
    client_checks(&mut checks, data_dir.as_deref());
    report(ctx, &checks)
}

/// What the daemon said.
struct Daemon {
    status: pb::StatusReply,
    diagnosis: Option<pb::DiagnoseReply>,
    /// Why there is no diagnosis, when there is none.
    why_no_diagnosis: String,
}

/// Reachable, this user's, serving this data folder, this version.
async fn daemon_checks(env: &EnvCtx, checks: &mut Vec<Check>) -> Option<Daemon> {
    let mut conn = match Connection::open(env).await {
        Ok(c) => c,
        // The data folder's and the database's checks below say what is wrong.
        Err(ClientError::NotOurs(e)) => {
            checks.push(unknown(
                "daemon",
                format!(
                    "not asked: berth starts and asks no daemon while it refuses its {} (see below)",
                    e.role.name()
                ),
            ));
            return None;
        }
        Err(e) => {
            checks.push(problem("daemon", e.to_string(), daemon_fix(&e)));
            return None;
        }
    };
    let status = match conn.status().await {
        Ok(s) => s,
        Err(e) => {
            checks.push(problem("daemon", e.to_string(), daemon_fix(&e)));
            return None;
        }
    };
    // The connection checked, before sending anything, that the socket's
    // folder and file are ours and that the peer runs as us.
    let ours = paths::data_dir(env).ok();
    let same = ours
        .as_deref()
        .is_some_and(|d| same_path(d, Path::new(&status.data_dir)));
    // Where it listens, and why there when it is not the derived socket (ADR 0042).
    let own_folder = super::daemon::fallback(env, Some(&status))
        .map(|f| {
            format!(
                "; it listens in a folder of its own, because {} is not used: {}",
                escaped(&f.instead_of.display().to_string()),
                escaped(&f.because)
            )
        })
        .unwrap_or_default();
    checks.push(if same {
        ok(
            "daemon",
            format!(
                "berthd (pid {}) answers on {}, runs as this user and serves the data folder {}{own_folder}",
                status.pid,
                conn.socket().display(),
                status.data_dir
            ),
        )
    } else {
        problem(
            "daemon",
            format!(
                "the berthd on {} serves the data folder {}, not this client's {}",
                conn.socket().display(),
                status.data_dir,
                ours.map(|d| d.display().to_string()).unwrap_or_default()
            ),
            format!(
                "give this registry its own socket with {}, or set {}={}",
                paths::BERTH_SOCKET,
                paths::BERTH_DATA_DIR,
                status.data_dir
            ),
        )
    });
    let version = berth_proto::VERSION;
    let same_version = compare_versions(&status.version, version) == std::cmp::Ordering::Equal;
    checks.push(if same_version {
        ok("version", format!("berthd and berth are both {version}"))
    } else if compare_versions(&status.version, version) == std::cmp::Ordering::Less {
        problem(
            "version",
            format!(
                "berthd runs {}, older than this berth ({version})",
                status.version
            ),
            "berth daemon stop && berth daemon start",
        )
    } else {
        problem(
            "version",
            format!(
                "berthd runs {}, newer than this berth ({version})",
                status.version
            ),
            "install the berth that matches berthd, or berth daemon stop && berth daemon start to run this one's",
        )
    });
    if !same_version || !same {
        // A request stamped with another version makes a client replace the
        // daemon; a diagnosis only reads, and restarting is the fix's call.
        return Some(Daemon {
            status,
            diagnosis: None,
            why_no_diagnosis: "the daemon above must be fixed first".into(),
        });
    }
    let (diagnosis, why_no_diagnosis) = match conn
        .call(|mut c| async move { c.diagnose(pb::DiagnoseRequest {}).await })
        .await
    {
        Ok(d) => (Some(d), String::new()),
        Err(e) => (None, e.to_string()),
    };
    Some(Daemon {
        status,
        diagnosis,
        why_no_diagnosis,
    })
}

fn daemon_fix(e: &ClientError) -> String {
    match e {
        ClientError::Wedged { .. } => "berth daemon stop --force".into(),
        ClientError::DaemonNotFound => {
            "install berthd beside berth or on PATH, or set BERTH_DAEMON".into()
        }
        ClientError::Untrusted(_) => format!(
            "remove what is at that socket path, or point {} at a folder of your own",
            paths::BERTH_SOCKET
        ),
        _ => "berth daemon start, then see the log (berth doctor names it)".into(),
    }
}

fn same_path(a: &Path, b: &Path) -> bool {
    a == b || (a.canonicalize().ok().is_some() && a.canonicalize().ok() == b.canonicalize().ok())
}

/// A refusal of [`ownership`] as a problem: what is wrong, and its fix, which keeps the data.
fn refused(name: &str, e: &ownership::NotOurs) -> Check {
    let shown = escaped(&e.path.display().to_string()).into_owned();
    problem(
        name,
        format!("{shown}{}: {}", link_words(&e.path), escaped(&e.problem)),
        escaped(&e.fix).into_owned(),
    )
}

/// " is a symlink to X" when `path` itself is a link, so no link is ever called "not a
/// directory" again; "" otherwise.
fn link_words(path: &Path) -> String {
    match std::fs::read_link(path) {
        Ok(to) => format!(" is a symlink to {}", escaped(&to.display().to_string())),
        Err(_) => String::new(),
    }
}

/// The data folder, and the record and lock berth reads in it, as every berth program checks
/// them ([`ownership::check_data_folder`]), and on Unix closed to group and others (it names
/// the user's folders and workspaces; berth creates it 0700). A link to it is named, with
/// where it leads.
fn data_folder_check(dir: &Path, uid: Uid) -> Check {
    let name = "data folder";
    let shown = escaped(&dir.display().to_string()).into_owned();
    let found = match ownership::check(dir, ownership::Role::DataFolder, uid) {
        Ok(f) => f,
        Err(e) => return refused(name, &e),
    };
    let real = escaped(&found.real.display().to_string()).into_owned();
    let link = link_words(dir);
    if !found.exists {
        return if link.is_empty() {
            ok(
                name,
                format!("{shown} does not exist yet; berthd creates it 0700"),
            )
        } else {
            ok(
                name,
                format!("{shown}{link}, which does not exist yet; berthd creates {real} 0700"),
            )
        };
    }
    for (file, role) in ownership::data_files(dir) {
        if role != ownership::Role::Database
            && let Err(e) = ownership::check(&file, role, uid)
        {
            return refused(name, &e);
        }
    }
    let mode = found.mode;
    if cfg!(unix) && mode & 0o077 != 0 {
        let what = if link.is_empty() {
            shown
        } else {
            format!("{shown}{link}, and {real}")
        };
        problem(
            name,
            format!("{what} has mode {mode:04o}: group or others may enter it"),
            format!("chmod 700 {real}"),
        )
    } else if cfg!(unix) && link.is_empty() {
        ok(name, format!("{shown}: this user's, mode {mode:04o}"))
    } else if cfg!(unix) {
        ok(
            name,
            format!(
                "{shown}{link}; {real} is this user's, mode {mode:04o}, closed to others, so berth uses it"
            ),
        )
    } else {
        ok(name, format!("{shown}{link}: a folder ({NO_OWNER_CHECK})"))
    }
}

/// The database and its WAL files, as every berth program checks them: on Unix this user's and
/// not writable by group or others; regular files, reached through no link of another user.
fn database_file_check(data_dir: &Path, uid: Uid) -> Check {
    let mut found = Vec::new();
    for (file, role) in ownership::data_files(data_dir) {
        if role != ownership::Role::Database {
            continue;
        }
        match ownership::check(&file, role, uid) {
            Err(e) => return refused("database", &e),
            Ok(f) if f.exists => {
                let shown = escaped(&file.display().to_string()).into_owned();
                found.push(if cfg!(unix) {
                    format!("{shown} ({:04o})", f.mode)
                } else {
                    shown
                });
            }
            Ok(_) => {}
        }
    }
    let db = paths::database_path(data_dir);
    if found.is_empty() {
        return ok(
            "database",
            format!("{} does not exist yet", escaped(&db.display().to_string())),
        );
    }
    if cfg!(unix) {
        ok(
            "database",
            format!("this user's, not writable by others: {}", found.join(", ")),
        )
    } else {
        ok(
            "database",
            format!("regular files: {} ({NO_OWNER_CHECK})", found.join(", ")),
        )
    }
}

/// What Windows says instead of the owner and mode checks.
const NO_OWNER_CHECK: &str = "owner and mode are Unix checks: on Windows an access list decides, which a folder under the user's profile inherits from the profile";
/// Watches berthd holds, all of this user's, against the per-user limit.
fn inotify_check(daemon_watches: Option<u64>) -> Check {
    let limit = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok());
    let Some(limit) = limit else {
        return unknown(
            "inotify watches",
            "this system has no /proc/sys/fs/inotify/max_user_watches to compare with",
        );
    };
    let daemon = daemon_watches
        .map(|w| format!("berthd holds {w}; "))
        .unwrap_or_default();
    let Some(all) = user_inotify_watches(paths::current_uid()) else {
        return ok(
            "inotify watches",
            format!("{daemon}the limit is {limit} per user (this user's total cannot be read)"),
        );
    };
    // Past nine tenths, the next editor or watcher to start runs out.
    if all * 10 >= limit * 9 {
        problem(
            "inotify watches",
            format!("{daemon}this user's processes hold {all} of the {limit} allowed"),
            format!(
                "sudo sysctl fs.inotify.max_user_watches={} (and put the same in /etc/sysctl.d/ to keep it)",
                limit.saturating_mul(2)
            ),
        )
    } else {
        ok(
            "inotify watches",
            format!("{daemon}this user's processes hold {all} of the {limit} allowed"),
        )
    }
}

/// The inotify watches every process of `uid` holds: the `inotify wd:` lines
/// of each inotify descriptor's fdinfo. `None` without a readable /proc.
#[cfg(unix)]
fn user_inotify_watches(uid: Uid) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    for proc in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = proc.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if proc.metadata().map(|m| m.uid()).ok() != Some(uid) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(proc.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            let inotify =
                std::fs::read_link(fd.path()).is_ok_and(|t| t.as_os_str() == "anon_inode:inotify");
            if !inotify {
                continue;
            }
            let info = proc.path().join("fdinfo").join(fd.file_name());
            if let Ok(text) = std::fs::read_to_string(info) {
                total += text
                    .lines()
                    .filter(|l| l.starts_with("inotify wd:"))
                    .count() as u64;
            }
        }
    }
    Some(total)
}

/// No /proc, so no count (inotify is Linux's anyway).
#[cfg(not(unix))]
fn user_inotify_watches(_: Uid) -> Option<u64> {
    None
}

/// Where the log is: the daemon's word, else where a daemon started from
/// here would write it.
fn log_check(env: &EnvCtx, diagnosis: Option<&pb::DiagnoseReply>) -> Check {
    if diagnosis.is_none()
        && let Ok(dir) = paths::state_dir(env)
        && let Err(e) = ownership::check_state_folder(&dir, env.uid)
    {
        return refused("log", &e);
    }
    let file = match diagnosis {
        Some(d) => PathBuf::from(&d.log_file),
        None => match paths::state_dir(env) {
            Ok(d) => d.join(berth_client::logfile::DAEMON_LOG),
            Err(e) => return unknown("log", e.to_string()),
        },
    };
    let shown = escaped(&file.display().to_string()).into_owned();
    if file.is_file() {
        ok(
            "log",
            format!("berthd logs to {shown} (more detail: BERTH_LOG=debug)"),
        )
    } else {
        ok("log", format!("berthd logs to {shown} (not written yet)"))
    }
}

/// Every client's registration in each scope, judged as a whole (registered, not registered,
/// or partly); for each registered one its files as `berth install` writes them, the data folder
/// its servers' environment leads to, and for Codex whether its hooks are approved.
fn client_checks(checks: &mut Vec<Check>, data_dir: Option<&Path>) {
    let loc = match Locations::from_process() {
        Ok(l) => l,
        Err(e) => {
            checks.push(unknown("clients", format!("not checked: {e}")));
            return;
        }
    };
    let programs = match Programs::find() {
        Ok(p) => p,
        Err(e) => {
            checks.push(problem(
                "clients",
                e,
                "install berth-mcp and berth-hook beside berth",
            ));
            return;
        }
    };
    let survey = audit::survey(&loc, &programs);
    checks.push(ok("clients", clients_summary(&survey)).with(
        "registrations",
        survey.iter().map(registration_json).collect(),
    ));
    for reg in &survey {
        let scope = scope_flag(reg.scope);
        let name = reg.client.name();
        let label = |what: &str| match reg.scope {
            Scope::User => format!("{what} {name}"),
            Scope::Project => format!("{what} {name} (project)"),
        };
        let check = match &reg.standing {
            Standing::NotRegistered => None,
            Standing::Registered => Some(match audit::drift(reg) {
                Ok(changed) if changed.is_empty() => ok(
                    label("client"),
                    format!(
                        "registered as berth install writes it: {}",
                        reg.specs
                            .iter()
                            .map(|s| escaped(&s.path.display().to_string()).into_owned())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                Ok(changed) => problem(
                    label("client"),
                    format!(
                        "{} differs from what berth install writes (berth install {name}{scope} --dry-run shows how)",
                        changed
                            .iter()
                            .map(|p| escaped(&p.path.display().to_string()).into_owned())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    format!("berth install {name}{scope}"),
                ),
                Err(e) => problem(
                    label("client"),
                    e,
                    format!("fix the file (or move it aside), then berth install {name}{scope}"),
                ),
            }),
            Standing::Partly(parts) => Some(problem(
                label("client"),
                partly_words(parts),
                format!(
                    "berth install {name}{scope} to complete it, or berth uninstall {name}{scope} to remove the rest"
                ),
            )),
            // Without berth's server entry, a hooks file that cannot be read may or may not hold
            // berth's hooks.
            Standing::Unreadable {
                why,
                server: Some(false),
            } => Some(unknown(
                label("client"),
                format!(
                    "its MCP server file holds no entry of berth's, and whether berth's hooks are left cannot be told: {why}"
                ),
            )),
            Standing::Unreadable { why, .. } => Some(problem(
                label("client"),
                why.clone(),
                format!("fix the file (or move it aside), then berth install {name}{scope}"),
            )),
        };
        if let Some(check) = check {
            checks.push(check.with("registration", registration_json(reg)));
        }
        if let (Some(ours), true) = (data_dir, reg.standing.has_server()) {
            checks.push(environment_check(reg, &label("environment"), ours));
        }
    }
    let codex = survey.iter().any(|r| {
        r.client == berth_install::Client::Codex
            && r.scope == Scope::User
            && r.standing == Standing::Registered
    });
    if codex {
        checks.push(match audit::codex_hook_trust(&loc, &programs) {
            Ok(HookTrust::Recorded) => ok(
                "codex hooks",
                "Codex recorded an approval of each of berth's hooks (Codex keys it to a hash of the hook that only Codex computes: if it warns at start that hooks need review, approve them again in /hooks)",
            ),
            Ok(HookTrust::Waiting(events)) => problem(
                "codex hooks",
                format!(
                    "berth's {} hook{} {} waiting for approval: Codex runs no hook its user has not approved",
                    match events.split_last() {
                        Some((last, rest)) if !rest.is_empty() =>
                            format!("{} and {last}", rest.join(", ")),
                        _ => events.join(""),
                    },
                    if events.len() == 1 { "" } else { "s" },
                    if events.len() == 1 { "is" } else { "are" },
                ),
                "start Codex, open /hooks and approve berth's hooks",
            ),
            Ok(HookTrust::NotRegistered) => problem(
                "codex hooks",
                "berth's MCP server is registered with Codex but its hooks are not",
                "berth install codex",
            ),
            Err(e) => problem("codex hooks", e, "fix the file, then berth install codex"),
        });
    }
}

/// The scope's flag on a command line: nothing for the user's.
fn scope_flag(scope: Scope) -> &'static str {
    match scope {
        Scope::User => "",
        Scope::Project => " --scope project",
    }
}

/// A registration's word.
fn standing_word(standing: &Standing) -> &'static str {
    match standing {
        Standing::Registered => "registered",
        Standing::NotRegistered => "not registered",
        Standing::Partly(_) => "partly registered",
        Standing::Unreadable { .. } => "unreadable",
    }
}

/// `{"client", "scope", "state", "missing"}`: `missing` lists the files that lack berth's part
/// of a partly registered client.
fn registration_json(reg: &audit::Registration) -> serde_json::Value {
    let missing: Vec<String> = match &reg.standing {
        Standing::Partly(parts) => parts
            .iter()
            .filter(|p| !p.present)
            .map(|p| p.file.display().to_string())
            .collect(),
        _ => Vec::new(),
    };
    serde_json::json!({
        "client": reg.client.name(),
        "scope": if reg.scope == Scope::User { "user" } else { "project" },
        "state": standing_word(&reg.standing),
        "missing": missing,
    })
}

/// Which clients are registered, partly registered, or not, in a line.
fn clients_summary(survey: &[audit::Registration]) -> String {
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for reg in survey
        .iter()
        .filter(|r| r.standing != Standing::NotRegistered)
    {
        let word = standing_word(&reg.standing);
        let shown = match reg.scope {
            Scope::User => reg.client.name().to_string(),
            Scope::Project => format!("{} (project)", reg.client.name()),
        };
        match groups.iter_mut().find(|(w, _)| *w == word) {
            Some((_, names)) => names.push(shown),
            None => groups.push((word, vec![shown])),
        }
    }
    if groups.is_empty() {
        return "no client is registered (berth install <client> registers one)".into();
    }
    let mut rest: Vec<&str> = Vec::new();
    for reg in survey {
        let elsewhere = survey
            .iter()
            .any(|r| r.client == reg.client && r.standing != Standing::NotRegistered);
        if !elsewhere && !rest.contains(&reg.client.name()) {
            rest.push(reg.client.name());
        }
    }
    if !rest.is_empty() {
        groups.push((
            "not registered",
            rest.into_iter().map(str::to_string).collect(),
        ));
    }
    groups
        .iter()
        .map(|(word, names)| format!("{word}: {}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// What a partly registered client lacks and what of it is left, naming the files.
fn partly_words(parts: &[audit::Part]) -> String {
    let what = |p: &audit::Part| {
        if p.server {
            "berth's MCP server entry is"
        } else {
            "berth's hooks are"
        }
    };
    let shown = |p: &audit::Part| escaped(&p.file.display().to_string()).into_owned();
    let missing = parts
        .iter()
        .filter(|p| !p.present)
        .map(|p| format!("{} missing from {}", what(p), shown(p)));
    let left = parts.iter().filter(|p| p.present).map(|p| {
        let shared = p
            .shared_with
            .map(|c| format!(" (shared with {})", c.name()))
            .unwrap_or_default();
        format!("{} still in {}{shared}", what(p), shown(p))
    });
    format!(
        "partly registered: {}",
        missing.chain(left).collect::<Vec<_>>().join("; ")
    )
}

/// Whether the environment a client gives berth's server leads to the same
/// data folder (the registry's identity; its daemon is found through it).
fn environment_check(reg: &audit::Registration, name: &str, ours: &Path) -> Check {
    let Some(spec) = reg.specs.first() else {
        return unknown(name, "no MCP server file");
    };
    let entry = match audit::entry_env(spec) {
        Ok(e) => e,
        Err(e) => return problem(name, e, format!("berth install {}", reg.client.name())),
    };
    let inherits = Inherits::of(reg.client);
    let mine = |k: &str| -> Option<OsString> { std::env::var_os(k) };
    let theirs = EnvCtx::from_vars(|k| audit::server_var(k, inherits, &entry, &mine));
    let Ok(their_dir) = paths::data_dir(&theirs) else {
        return problem(
            name,
            format!("with {}, berth-mcp finds no data folder", inherits.words()),
            format!(
                "add {}={} to the env of berth's entry in {}",
                paths::BERTH_DATA_DIR,
                ours.display(),
                spec.path.display()
            ),
        );
    };
    if same_path(&their_dir, ours) {
        ok(
            name,
            format!(
                "with {}, berth-mcp reaches the same data folder, so the same daemon",
                inherits.words()
            ),
        )
    } else {
        let fix = match inherits {
            Inherits::Stripped => format!("berth install {}", reg.client.name()),
            _ => format!(
                "add \"env\": {{\"{}\": \"{}\"}} to berth's entry in {}",
                paths::BERTH_DATA_DIR,
                ours.display(),
                spec.path.display()
            ),
        };
        problem(
            name,
            format!(
                "with {}, berth-mcp would use the data folder {}, not {}: another registry",
                inherits.words(),
                escaped(&their_dir.display().to_string()),
                escaped(&ours.display().to_string())
            ),
            fix,
        )
    }
}

fn report(ctx: &Ctx, checks: &[Check]) -> Result<(), CliError> {
    let failed = checks
        .iter()
        .filter(|c| c.status == Status::Problem)
        .count();
    if ctx.json {
        let list: Vec<_> = checks
            .iter()
            .map(|c| {
                let mut check = serde_json::json!({
                    "name": c.name,
                    "status": match c.status {
                        Status::Ok => "ok",
                        Status::Problem => "problem",
                        Status::Unknown => "unknown",
                    },
                    "ok": c.status != Status::Problem,
                    "detail": c.detail,
                    "fix": c.fix,
                });
                if let Some(o) = check.as_object_mut() {
                    o.extend(c.more.clone());
                }
                check
            })
            .collect();
        output::json(&serde_json::json!({ "ok": failed == 0, "checks": list }))?;
    } else {
        let mut text = String::new();
        for c in checks {
            let mark = match c.status {
                Status::Ok => "ok     ",
                Status::Problem => "problem",
                Status::Unknown => "unknown",
            };
            text.push_str(&format!(
                "{mark}  {}: {}\n",
                escaped(&c.name),
                escaped(&c.detail)
            ));
            if let Some(fix) = &c.fix {
                text.push_str(&format!("         fix: {}\n", escaped(fix)));
            }
        }
        output::text(&text)?;
    }
    if failed == 0 {
        return Ok(());
    }
    Err(CliError::failed(format!(
        "{failed} of {} checks found a problem",
        checks.len()
    ))
    .hint("run each fix line above, then berth doctor again"))
}
