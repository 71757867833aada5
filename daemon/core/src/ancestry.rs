//! Which client a hook or an MCP server was started by: its nearest client ancestor, the first
//! process up its parents that is neither a shell nor one of berth's own programs
//! (docs/decisions/0046-a-hook-and-a-server-are-linked-by-their-client-process.md). The
//! daemon reads the system's process table behind [`ProcView`]; this decides.
//!
//! **Architecture Invariant:** a process is named by its pid *and* its start time, and a walk
//! that cannot be sure of a step gives no client: a parent that started after its child (its
//! pid was reused), a child re-parented during the walk, pid 0 or 1 (init, where orphans go),
//! and the daemon's own parent (where a detached daemon's, and so its clients', orphans go).

/// A process as the system names it: its pid and when it started, in the system's own unit
/// (clock ticks since boot on Linux, microseconds since the epoch on macOS, 100 ns since 1601
/// on Windows), so that a pid reused by a later process is another process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessId {
    /// The process id.
    pub pid: u32,
    /// When it started.
    pub started: u64,
}

/// What the system says about one running process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessFacts {
    /// When it started, in the unit of [`ProcessId::started`].
    pub started: u64,
    /// Its parent's pid (0 when it has none).
    pub parent: u32,
    /// The name of the program it runs: Linux's `comm`, macOS's `p_comm`, Windows' image name.
    pub name: String,
}

/// The system's process table, as the walk reads it.
pub trait ProcView {
    /// The process `pid`, when it runs and may be looked at.
    fn process(&self, pid: u32) -> Option<ProcessFacts>;
}

/// How many parents a walk looks at: shells nest a few deep, not more.
pub const MAX_DEPTH: usize = 16;

/// Whether the walk goes past a process running `name`: a shell (Codex runs hooks through one),
/// or one of berth's own programs. Compared without case, a Windows `.exe` or a login shell's
/// leading `-`.
pub fn passes_through(name: &str) -> bool {
    let name = name.strip_prefix('-').unwrap_or(name).to_ascii_lowercase();
    let name = name.strip_suffix(".exe").unwrap_or(&name);
    matches!(
        name,
        "sh" | "bash"
            | "dash"
            | "zsh"
            | "fish"
            | "ksh"
            | "mksh"
            | "ash"
            | "busybox"
            | "tcsh"
            | "csh"
            | "cmd"
            | "powershell"
            | "pwsh"
            | "berth"
            | "berth-hook"
            | "berth-mcp"
            | "berthd"
    )
}

/// The nearest client ancestor of `pid`, or `None` when the walk cannot be sure of one.
/// `daemon` is the daemon's own pid: its parent is never a client.
pub fn client_of(view: &impl ProcView, pid: u32, daemon: u32) -> Option<ProcessId> {
    let reaper = view.process(daemon).map(|d| d.parent);
    let mut child_pid = pid;
    let mut child = view.process(pid)?;
    for _ in 0..MAX_DEPTH {
        let parent_pid = child.parent;
        if parent_pid <= 1 || Some(parent_pid) == reaper {
            return None;
        }
        let parent = view.process(parent_pid)?;
        // A parent younger than its child holds the pid of one that exited.
        if parent.started > child.started {
            return None;
        }
        // Still the child's parent after it was read: had it exited meanwhile, the child would
        // have been re-parented, and its pid could already be another process's.
        let again = view.process(child_pid)?;
        if again.parent != parent_pid || again.started != child.started {
            return None;
        }
        if !passes_through(&parent.name) {
            return Some(ProcessId {
                pid: parent_pid,
                started: parent.started,
            });
        }
        child_pid = parent_pid;
        child = parent;
    }
    None
}

/// Reads Linux's `/proc/<pid>/stat`: `pid (comm) state ppid ... starttime ...`. The name may
/// hold spaces and parentheses, so it ends at the *last* `)`.
pub fn parse_linux_stat(stat: &str) -> Option<ProcessFacts> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?;
    // After the name: state (field 3), ppid (4), ..., starttime (22).
    let fields: Vec<&str> = stat.get(close + 1..)?.split_ascii_whitespace().collect();
    let parent = fields.get(1)?.parse().ok()?;
    let started = fields.get(19)?.parse().ok()?;
    Some(ProcessFacts {
        started,
        parent,
        name: name.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::cell::RefCell;
    use std::collections::HashMap;

    type Change = Box<dyn Fn(&mut HashMap<u32, ProcessFacts>)>;

    /// A process table; `after` changes it once, after the given number of reads, as a process
    /// that exits or starts during a walk would.
    #[derive(Default)]
    struct Table {
        procs: RefCell<HashMap<u32, ProcessFacts>>,
        reads: RefCell<usize>,
        after: RefCell<Option<(usize, Change)>>,
    }

    impl Table {
        fn with(procs: &[(u32, u32, u64, &str)]) -> Table {
            let t = Table::default();
            for &(pid, parent, started, name) in procs {
                t.procs.borrow_mut().insert(
                    pid,
                    ProcessFacts {
                        started,
                        parent,
                        name: name.into(),
                    },
                );
            }
            t
        }
    }

    impl ProcView for Table {
        fn process(&self, pid: u32) -> Option<ProcessFacts> {
            let n = {
                let mut r = self.reads.borrow_mut();
                *r += 1;
                *r
            };
            if let Some((at, change)) = self.after.borrow().as_ref()
                && *at + 1 == n
            {
                change(&mut self.procs.borrow_mut());
            }
            self.procs.borrow().get(&pid).cloned()
        }
    }

    const DAEMON: u32 = 50;

    /// init (1), a session manager (10) that adopted the daemon (50), the client (100).
    fn world(extra: &[(u32, u32, u64, &str)]) -> Table {
        let mut procs = vec![
            (1, 0, 0, "init"),
            (10, 1, 5, "systemd"),
            (DAEMON, 10, 6, "berthd"),
            (100, 10, 10, "codex"),
        ];
        procs.extend_from_slice(extra);
        Table::with(&procs)
    }

    fn id(pid: u32, started: u64) -> Option<ProcessId> {
        Some(ProcessId { pid, started })
    }

    #[rstest]
    #[case::a_server_started_directly(&[(200, 100, 20, "berth-mcp")], 200, id(100, 10))]
    #[case::a_hook_through_sh_c(&[(300, 100, 30, "sh"), (301, 300, 31, "berth-hook")], 301, id(100, 10))]
    #[case::shells_in_shells(
        &[(300, 100, 30, "-bash"), (301, 300, 31, "dash"), (302, 301, 32, "zsh"), (303, 302, 33, "berth-hook")],
        303,
        id(100, 10)
    )]
    #[case::windows_names(&[(300, 100, 30, "cmd.exe"), (301, 300, 31, "berth-hook.exe")], 301, id(100, 10))]
    #[case::berths_own_programs_between(&[(300, 100, 30, "berth"), (301, 300, 31, "berth-hook")], 301, id(100, 10))]
    #[case::the_first_other_process_wins(
        &[(150, 100, 15, "node"), (300, 150, 30, "sh"), (301, 300, 31, "berth-hook")],
        301,
        id(150, 15)
    )]
    #[case::an_orphan_of_init(&[(301, 1, 31, "berth-hook")], 301, None)]
    #[case::an_orphan_of_the_daemons_reaper(&[(301, 10, 31, "berth-hook")], 301, None)]
    #[case::only_shells_up_to_init(&[(300, 1, 30, "sh"), (301, 300, 31, "berth-hook")], 301, None)]
    #[case::a_parent_younger_than_its_child(&[(300, 100, 30, "codex"), (301, 300, 29, "berth-hook")], 301, None)]
    #[case::a_parent_gone(&[(301, 999, 31, "berth-hook")], 301, None)]
    #[case::a_caller_gone(&[], 301, None)]
    fn the_walk_finds_the_nearest_client_or_none(
        #[case] extra: &[(u32, u32, u64, &str)],
        #[case] pid: u32,
        #[case] want: Option<ProcessId>,
    ) {
        assert_eq!(client_of(&world(extra), pid, DAEMON), want);
    }

    #[test]
    fn a_chain_of_shells_deeper_than_the_bound_gives_none() {
        let mut procs: Vec<(u32, u32, u64, &str)> = Vec::new();
        let mut parent = 100;
        for pid in 1000..1000 + MAX_DEPTH as u32 + 1 {
            procs.push((pid, parent, u64::from(pid), "sh"));
            parent = pid;
        }
        procs.push((5000, parent, 5000, "berth-hook"));
        assert_eq!(client_of(&world(&procs), 5000, DAEMON), None);
    }

    /// The parent exits while the walk reads it and another process takes its pid, started
    /// before the child was read: the child has been re-parented, so the walk says nothing.
    #[test]
    fn a_parent_that_exits_during_the_walk_gives_none() {
        let t = world(&[(300, 100, 30, "sh"), (301, 300, 31, "berth-hook")]);
        // Reads: the daemon, 301, then 300; before the second read of 301, 300 is gone and
        // 301 belongs to init.
        *t.after.borrow_mut() = Some((
            3,
            Box::new(|p: &mut HashMap<u32, ProcessFacts>| {
                p.remove(&300);
                p.get_mut(&301).unwrap().parent = 1;
            }),
        ));
        assert_eq!(client_of(&t, 301, DAEMON), None);
    }

    #[rstest]
    #[case::a_plain_name("4242 (codex) S 100 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 777 1 1", Some((100, 777, "codex")))]
    #[case::a_name_with_a_paren_and_spaces(
        "7 (x) 1 2 (y) S 3 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 99 1 1",
        Some((3, 99, "x) 1 2 (y"))
    )]
    #[case::truncated("7 (x) S 3 7 7", None)]
    #[case::no_name("7 x S 3", None)]
    #[case::not_numbers("7 (x) S p 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 q 1 1", None)]
    fn linux_stat_lines_are_read_from_the_last_paren(
        #[case] line: &str,
        #[case] want: Option<(u32, u64, &str)>,
    ) {
        let got = parse_linux_stat(line).map(|f| (f.parent, f.started, f.name));
        assert_eq!(got, want.map(|(p, s, n)| (p, s, n.to_string())));
    }

    #[rstest]
    #[case("sh", true)]
    #[case("-zsh", true)]
    #[case("PowerShell.EXE", true)]
    #[case("pwsh", true)]
    #[case("berth-mcp", true)]
    #[case("codex", false)]
    #[case("node", false)]
    #[case("claude", false)]
    #[case("shop", false)]
    fn shells_and_berths_programs_are_passed_through(#[case] name: &str, #[case] passed: bool) {
        assert_eq!(passes_through(name), passed);
    }
}
