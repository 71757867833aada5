//! Floods of connections: thousands of idle or half-open sockets cost the
//! daemon bounded memory and descriptors, other clients are still answered,
//! and silent sockets are closed after the idle timeout.

// Unix only: raw Unix-socket clients, descriptor limits and /proc.
#![cfg(unix)]

use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use berth_tests::{TestEnv, bin};

const IDLE: usize = 5_000;
const HALF_PREFACE: usize = 200;
/// The daemon's idle timeout in this test (`berthd --idle-timeout`).
const IDLE_TIMEOUT: Duration = Duration::from_secs(4);
/// berthd's default connection cap.
const CAP: usize = 512;

/// Raises this test process's soft descriptor limit to its hard limit: the
/// flood holds thousands of sockets at once.
fn raise_descriptor_limit(need: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write only the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &lim), 0);
    }
    assert!(
        lim.rlim_cur >= need,
        "this test needs {need} descriptors; the hard limit is {} (raise it with `ulimit -Hn`)",
        lim.rlim_cur
    );
}

/// A process's resident memory in KiB, from /proc/<pid>/status.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in /proc/{pid}/status"))
}

fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Whether the daemon closed `s`: reads what it sent (its HTTP/2 settings)
/// until end-of-file, or until nothing more is waiting.
fn closed(mut s: &UnixStream) -> bool {
    let mut buf = [0u8; 512];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return false,
            // Reset by the peer: closed as well.
            Err(_) => return true,
        }
    }
}

/// Waits until the daemon sends something on `s` (its HTTP/2 settings);
/// panics if it closes `s` instead or says nothing for a minute.
fn answered(mut s: &UnixStream) {
    // A blocking read returns as soon as the daemon sends.
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut buf = [0u8; 512];
    match s.read(&mut buf) {
        Ok(0) => panic!("the daemon closed the newest connection"),
        Ok(_) => {}
        Err(e) => panic!("the daemon did not answer the newest connection: {e}"),
    }
    s.set_nonblocking(true).unwrap();
}

fn connect(env: &TestEnv) -> UnixStream {
    let s = UnixStream::connect(env.socket()).expect("connect to berthd");
    s.set_nonblocking(true).unwrap();
    s
}

#[test]
fn a_flood_of_idle_and_half_open_connections_is_bounded_and_closed() {
    raise_descriptor_limit((IDLE + HALF_PREFACE + 200) as u64);
    let env = TestEnv::new();
    let mut cmd = env.command(bin("berthd"));
    cmd.args(["--idle-timeout", &IDLE_TIMEOUT.as_secs_f64().to_string()]);
    // The default filter, as users run it: the harness's `debug` would log
    // two lines for each of the thousands of connections.
    cmd.env("BERTH_LOG", "info");
    let _ = env.run(cmd).success();
    let pid = env.daemon_pid();
    let usual = (0..3)
        .map(|_| env.run_berth(["workspace", "list"]).success().elapsed)
        .max()
        .unwrap();
    let before = rss_kib(pid);

    let started = Instant::now();
    let mut socks: Vec<UnixStream> = (0..IDLE).map(|_| connect(&env)).collect();
    let mut half = Vec::new();
    for _ in 0..HALF_PREFACE {
        let mut s = connect(&env);
        s.write_all(&b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"[..12])
            .unwrap();
        half.push((s, Instant::now()));
    }
    // The burst waits in the kernel's accept queue until the daemon takes
    // it in; the newest connection is answered (the server's settings) once
    // all before it were.
    answered(&half[HALF_PREFACE - 1].0);
    let taken_in = started.elapsed();
    // The newest are held, not closed at once: room is made from the oldest.
    let still_open = half.iter().filter(|(s, _)| !closed(s)).count();
    assert_eq!(
        still_open, HALF_PREFACE,
        "the newest connections stay open until idle"
    );

    // Other clients are answered while the flood is held open.
    for _ in 0..5 {
        let run = env.run_berth(["workspace", "list"]).success();
        assert!(
            run.elapsed < usual * 4 + Duration::from_millis(500),
            "answered in {:?} during the flood, {usual:?} before it",
            run.elapsed
        );
    }
    let during = rss_kib(pid);
    let fds = open_descriptors(pid);
    eprintln!(
        "berthd took in {} connections in {taken_in:?}; RSS {before} KiB before, {during} KiB \
         with them held open; {fds} descriptors",
        IDLE + HALF_PREFACE
    );
    assert!(fds < CAP + 100, "{fds} descriptors open: the cap is {CAP}");
    assert!(
        during < before + 32 * 1024,
        "RSS grew from {before} KiB to {during} KiB"
    );

    // Every silent socket is closed: the oldest to make room, the rest once
    // idle for the timeout, and none of the newest before it.
    let deadline = Instant::now() + IDLE_TIMEOUT * 5;
    let mut open: Vec<(UnixStream, Option<Instant>)> = socks
        .drain(..)
        .map(|s| (s, None))
        .chain(half.into_iter().map(|(s, at)| (s, Some(at))))
        .collect();
    while !open.is_empty() && Instant::now() < deadline {
        let mut i = 0;
        while i < open.len() {
            if closed(&open[i].0) {
                if let Some(opened) = open[i].1 {
                    assert!(
                        opened.elapsed() >= IDLE_TIMEOUT,
                        "a half-open connection was closed after {:?}, before the idle timeout",
                        opened.elapsed()
                    );
                }
                open.swap_remove(i);
            } else {
                i += 1;
            }
        }
        // Paces the poll: the subject is the daemon's real idle timeout, on its wall clock.
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        open.is_empty(),
        "{} connections still open {:?} after the flood",
        open.len(),
        IDLE_TIMEOUT * 5
    );
    let _ = env.run_berth(["workspace", "list"]).success();
}
