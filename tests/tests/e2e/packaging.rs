//! The service files in `packaging/`: the launchd agent parses as a property list and starts
//! the daemon the way a client would find it, naming no path of its own (the daemon derives its
//! socket, data and log folders exactly as every client does).

use std::path::PathBuf;
use std::process::Command;

fn plist() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../packaging/launchd/dev.berth.berthd.plist")
}

#[test]
fn the_launchd_agent_parses_and_runs_the_daemon_in_the_foreground_naming_no_path_of_its_own() {
    let path = plist();
    // Python's plistlib reads property lists as launchd does; Debian's python3 has it.
    let parsed = Command::new("python3")
        .args([
            "-c",
            "import plistlib,sys,json; print(json.dumps(plistlib.load(open(sys.argv[1],'rb'))))",
        ])
        .arg(&path)
        .output()
        .expect("python3, which reads the property list");
    assert!(
        parsed.status.success(),
        "the agent is not a valid property list: {}",
        String::from_utf8_lossy(&parsed.stderr)
    );
    let agent: serde_json::Value = serde_json::from_slice(&parsed.stdout).unwrap();
    assert_eq!(agent["Label"], "dev.berth.berthd");
    // BERTHD is replaced by the installed berthd, as the file's header says.
    assert_eq!(
        agent["ProgramArguments"],
        serde_json::json!(["BERTHD", "--foreground"])
    );
    assert_eq!(agent["KeepAlive"]["SuccessfulExit"], false);
    assert_eq!(agent["RunAtLoad"], true);
    // The daemon finds its socket, data and logs itself, as every client derives them; a path
    // here would be a second truth, and one in a shared folder (/tmp) a file another user
    // could plant a link at.
    for key in [
        "StandardErrorPath",
        "StandardOutPath",
        "Sockets",
        "WorkingDirectory",
        "EnvironmentVariables",
    ] {
        assert!(agent.get(key).is_none(), "the agent sets {key}");
    }
}
