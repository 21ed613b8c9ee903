//! Nothing leaks: no process outlives its scenario, and a stderr flood leaves the
//! client's memory bounded.

use super::support::*;
use mcp_conformance::verdict::{self, Verdict};
use mcp_refclient::TestHooks;
use std::process::Command;

/// Every live process whose command line mentions one of `needles`.
fn processes_mentioning(needles: &[String]) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if needles.iter().any(|n| cmdline.contains(n.as_str()))
            && mcp_conformance::probe::procs::is_alive(pid)
        {
            found.push((pid, cmdline));
        }
    }
    found
}

#[test]
fn no_process_started_by_a_process_or_stdio_scenario_outlives_it() {
    let mut temp_dirs = Vec::new();
    let mut ran = 0;
    for loaded in all_scenarios()
        .iter()
        .filter(|s| s.area() == "process" || s.area() == "stdio")
    {
        for profile in loaded.profiles() {
            let (result, outcome) =
                verdict::run_one(loaded, profile, &launcher(), &TestHooks::default());
            assert_eq!(
                result.verdict,
                Verdict::Pass,
                "{} under {}",
                loaded.name,
                profile.name()
            );
            temp_dirs.extend(
                outcome
                    .redactions
                    .iter()
                    .filter(|(_, to)| to == "[TMP]")
                    .map(|(from, _)| from.clone()),
            );
            ran += 1;
        }
    }
    assert!(ran > 20, "only {ran} runs");
    // The launcher, ignore-stdin and descendant cases are among them; every process of
    // theirs carries its scenario's temp folder on its command line.
    let left = processes_mentioning(&temp_dirs);
    assert!(left.is_empty(), "processes left alive: {left:?}");
}

#[test]
fn a_50_mb_stderr_flood_leaves_the_client_memory_bounded() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("flood")).unwrap();
    std::fs::write(
        folder.path().join("flood/fifty-megabytes.toml"),
        r#"
rules = ["stdio.stderr.drained"]
requirement = "a 50 MB stderr flood cannot block the server or grow the client's memory"
profiles = ["strict"]

[server]
steps = [
  { handshake = {} },
  { expect = { method = "tools/call" } },
  { stderr_flood = { bytes = 50000000, invalid_utf8 = true } },
  { reply = {} },
]

[client]
steps = [{ connect = {} }, { call_tool = { name = "echo" } }, { close = {} }]

[expect]
steps = [{ step = 2, ok = true }]
"#,
    )
    .unwrap();
    // The peak is read by a small Python parent, not by wait4 here: a child spawned from this
    // test process (vfork and exec) inherits the test process's own high-water mark, which
    // the other tests running beside it set. ru_maxrss is a maximum, so the parent's ~10 MiB
    // does not add to the runner's.
    let measure = "import resource, subprocess, sys\n\
        code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n\
        print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)";
    let output = Command::new("python3")
        .args(["-S", "-c", measure])
        .arg(conformance_bin())
        .args(["run", "--scenarios"])
        .arg(folder.path())
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    let (code, peak_kib) = said
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("the measure said {said:?}"));
    assert_eq!(code, "0", "the flood scenario failed: exit {code}");
    // ru_maxrss is in KiB: the peak of the runner and client (and of the server it reaped).
    let peak_mib = peak_kib.parse::<i64>().unwrap() / 1024;
    eprintln!("peak RSS with a 50 MB stderr flood: {peak_mib} MiB");
    assert!(peak_mib < 24, "peak RSS {peak_mib} MiB for a 50 MB flood");
}
