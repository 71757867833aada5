//! berth's end-to-end tests: the real `berth` and `berthd` binaries, one
//! hermetic [`berth_tests::TestEnv`] (and so one daemon) per test.
//!
//! Run with `cargo test --workspace`, which builds the binaries first.

// Auto-start, one daemon per user, crashes, signals, permissions, corrupt state (docs/reference.md,
// "The daemon").
#[path = "e2e/daemon.rs"]
mod daemon;
// Started by systemd on the first connection: descriptor 3, and the LISTEN_* variables.
#[cfg(target_os = "linux")]
#[path = "e2e/socket_activation.rs"]
mod socket_activation;
// Cargo metadata: descriptions, licences, readmes, and crates publishable as they are.
#[path = "e2e/crates.rs"]
mod crates;
// The service files in packaging/ (the launchd agent).
#[path = "e2e/packaging.rs"]
mod packaging;
// Local homes: where `workspace create --home` may put a workspace's files (docs/reference.md,
// "Workspaces and homes").
#[path = "e2e/homes.rs"]
mod homes;
// Homes that nest or are swapped, metadata on overwrite, a bad registry row.
#[path = "e2e/home_swaps.rs"]
mod home_swaps;
// Workspace create/list/show/switch/delete, names, exit codes (docs/reference.md, "Workspaces and
// homes" and "The CLI").
#[path = "e2e/workspaces.rs"]
mod workspaces;
// Every row of the resolution table through `berth resolve` (docs/reference.md, "Resolution").
#[path = "e2e/resolve.rs"]
mod resolve;
// The walk: where it stops, file paths, relative and missing paths (docs/reference.md, "Roots, the
// walk and project files").
#[path = "e2e/walk.rs"]
mod walk;
// Linked git worktrees made by real git: a worktree of an approved repository is its project;
// forgeries are judged as ordinary folders (docs/reference.md, "Roots, the walk and project files").
#[path = "e2e/worktrees.rs"]
mod worktrees;
// `root add/remove/list` and their refusals (docs/reference.md, "Roots, the walk and project
// files").
#[path = "e2e/roots.rs"]
mod roots;
// `workspace use`: approving a project, overlaps, refusals (docs/reference.md, "The CLI").
#[path = "e2e/workspace_use.rs"]
mod workspace_use;
// `setting get/set/unset` (docs/reference.md, "The CLI").
#[path = "e2e/settings.rs"]
mod settings;
// `claim`: which workspaces may learn a conversation (docs/reference.md, "Conversations").
#[path = "e2e/claim.rs"]
mod claim;
// `path`: how a tool path qualifies, with its JSON shape (docs/reference.md, "Qualified paths and
// file tools" and "The CLI").
#[path = "e2e/path.rs"]
mod path;
// `explain`: the walk drawn for a person.
#[path = "e2e/explain.rs"]
mod explain;
// Whole outputs a person reads (explain, resolve, sessions, doctor, errors, --help) as snapshots.
#[cfg(unix)]
#[path = "e2e/outputs.rs"]
mod outputs;
// Project files: the bad-file corpus and cloned repositories that only propose (docs/reference.md,
// "Roots, the walk and project files").
#[path = "e2e/project_files.rs"]
mod project_files;
// Crash-safety soak: answered writes survive kill -9 at random moments (docs/reference.md, "The
// daemon").
#[path = "e2e/soak.rs"]
mod soak;
// Stampede: 32 clients at once, round after round, one daemon (docs/reference.md, "The daemon").
#[path = "e2e/stampede.rs"]
mod stampede;
// Version skew between clients and the daemon (docs/reference.md, "The daemon").
#[path = "e2e/versions.rs"]
mod versions;
// Rules that span registry rows hold under concurrent writers.
#[path = "e2e/races.rs"]
mod races;
// Another user's fake daemon where a client looks: refused before a byte is sent.
#[path = "e2e/impostor.rs"]
mod impostor;
// A data folder, database or path to them that another user could change: nothing is used.
#[path = "e2e/data_folder.rs"]
mod data_folder;
// Control characters in names and paths reach no human output raw.
#[path = "e2e/escapes.rs"]
mod escapes;
// Hostile input through every entry point: clear errors, no hangs, nothing outside touched.
#[path = "e2e/hostile.rs"]
mod hostile;
// Malformed MCP input on berth-mcp's stdin: one JSON-RPC error each, bounded lines, no hang.
#[path = "e2e/mcp_input.rs"]
mod mcp_input;
// Log files only their user may read.
#[path = "e2e/logs.rs"]
mod logs;
// Floods of idle and half-open connections: bounded, closed, others answered.
#[path = "e2e/flood.rs"]
mod flood;
// Special files and stuck calls: the daemon keeps answering, and stop means stopped.
#[path = "e2e/stuck.rs"]
mod stuck;

/// Every file in `tests/e2e/` is compiled: a file without a `mod` line above
/// would silently never run (jj's `test_no_forgotten_test_files`).
#[test]
fn no_forgotten_test_files() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e");
    let this = include_str!("e2e.rs");
    let mut forgotten = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read tests/e2e") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if !this.contains(&format!("#[path = \"e2e/{name}\"]")) {
                forgotten.push(name);
            }
        }
    }
    assert!(
        forgotten.is_empty(),
        "tests/e2e/ files with no `#[path]` + `mod` line in tests/e2e.rs: {forgotten:?}"
    );
}
// `berth doctor`: the checklist, each problem's fix, exit codes.
#[path = "e2e/doctor.rs"]
mod doctor;
// `berth sessions`: live sessions, ended ones with --all, the JSON shape.
#[path = "e2e/sessions.rs"]
mod sessions;
// A live session belongs to its process: another client cannot re-register it or call its tools.
#[path = "e2e/session_owner.rs"]
mod session_owner;
// A projectless session's session-start context names its temporary scratch folder.
#[path = "e2e/scratch_context.rs"]
mod scratch_context;
// One question per client session: a hook and a server no session id links are linked by their
// client process and folder.
#[path = "e2e/ask_once.rs"]
mod ask_once;
// The question in the client's own form, asked of a client on the official Python MCP SDK, in both
// protocol eras.
#[cfg(unix)]
#[path = "e2e/elicit_python.rs"]
mod elicit_python;
// `berth exec`: the answer in a wrapped command's environment and arguments; failures run nothing.
#[path = "e2e/exec.rs"]
mod exec;
// `berth exec --roots`: the roots relay answers a wrapped server's roots; all else passes byte for byte.
// Unix: the probe's signals, `/proc` and Unix paths in its file URIs.
#[cfg(unix)]
#[path = "e2e/relay.rs"]
mod relay;
// `berth prompt` and `berth init`: the segment in the real shells' prompts.
#[path = "e2e/prompt.rs"]
mod prompt;
// `berth install/uninstall <client> --exec NAME`: a wrapped server in every client's file, byte-exact.
#[path = "e2e/install_exec.rs"]
mod install_exec;
// Uninstall removes the folders install created once they are empty again, and no other.
#[path = "e2e/install_folders.rs"]
mod install_folders;
// Errors that say what happened and what to do: a folder moved into itself, a pin that is no
// name, a FIFO in `ls`, a full disk (docs/reference.md, "Qualified paths and file tools").
#[path = "e2e/tool_errors.rs"]
mod tool_errors;
// How the hot-path clients are built and start: static on Linux with glibc.
#[path = "e2e/startup.rs"]
mod startup;
// Client configs with links a repository planted, or FIFOs: refused at once, nothing outside touched.
#[path = "e2e/client_configs.rs"]
mod client_configs;
// Client configs with comments where the client allows them, edited in place; hostile JSON refused.
#[path = "e2e/commented_configs.rs"]
mod commented_configs;
// Another user's `/tmp/berth-<uid>` made first: the daemon listens in a folder of its own.
#[path = "e2e/lockout.rs"]
mod lockout;
// The native-tool guard: `berth-hook pre-tool` with each client's payloads, failing open, and
// its registration (docs/reference.md, "The native-tool guard").
#[path = "e2e/guard.rs"]
mod guard;
