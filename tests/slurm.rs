//! Sweeps on a real Slurm cluster: `scripts/slurm-local.sh start` brings up a one-node
//! cluster on localhost (Debian's slurm-wlm and munge, daemons started by the script as root,
//! no systemd), then, end to end with the fp8gen binary:
//!
//! 1. a verify sweep: `sweep plan` → `sweep slurm --submit` → wait (`squeue`) → `merge` PASS;
//! 2. a task cancelled (`scancel <job>_<i>`) before it wrote its result: `merge` reports the
//!    missing shard and fails; `sweep slurm --submit` again submits only that task; `merge`
//!    passes;
//! 3. a small QoR sweep (two synthesis points) merged into `qor.csv`.
//!
//! When the cluster cannot be started (not root, no apt, packages not installable) the test
//! FAILS with the script's message: it never passes without having run a sweep.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fp8gen(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fp8gen"))
        .args(args)
        .output()
        .expect("run fp8gen");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).to_string(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// Stops the cluster when the test ends, passed or not — unless it was running before (a
/// user's sweep on the same machine keeps its cluster).
struct Cluster {
    started_here: bool,
}

impl Cluster {
    fn start() -> Cluster {
        let running = Command::new("bash")
            .arg(root().join("scripts/slurm-local.sh"))
            .arg("status")
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false);
        let out = Command::new("bash")
            .arg(root().join("scripts/slurm-local.sh"))
            .arg("start")
            .output()
            .expect("run scripts/slurm-local.sh");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.status.success(),
            "a one-node Slurm cluster could not be started (the sweep tests need root and Debian's slurm-wlm + munge):\n{text}"
        );
        eprintln!("{}", text.trim());
        Cluster {
            started_here: !running,
        }
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.started_here {
            return;
        }
        let _ = Command::new("bash")
            .arg(root().join("scripts/slurm-local.sh"))
            .arg("stop")
            .output();
    }
}

fn squeue_has(job: &str) -> bool {
    let out = Command::new("squeue")
        .args(["-h", "-j", job, "-o", "%i %T"])
        .output()
        .expect("squeue");
    !String::from_utf8_lossy(&out.stdout).trim().is_empty()
}

fn wait_for(job: &str, limit: Duration) {
    let t0 = Instant::now();
    while squeue_has(job) {
        assert!(
            t0.elapsed() < limit,
            "Slurm job {job} still queued or running after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn job_id(stdout: &str) -> String {
    let l = stdout
        .lines()
        .find(|l| l.starts_with("submitted job "))
        .unwrap_or_else(|| panic!("no job id in: {stdout}"));
    l["submitted job ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn results(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().to_string();
            n.ends_with(".json") && n != "plan.json" && !n.starts_with('.')
        })
        .count()
}

/// The second sweep: 200000 random FMA vectors in 3 shards.
const FMA_SWEEP: [&str; 17] = [
    "sweep",
    "slurm",
    "verify",
    "-u",
    "fma",
    "-f",
    "e4m3",
    "-r",
    "rne",
    "-s",
    "satfinite",
    "--random",
    "200000",
    "--shards",
    "3",
    "--rate",
    "1e7",
];

#[test]
fn verify_and_qor_sweeps_run_as_slurm_job_arrays_and_merge() {
    let _cluster = Cluster::start();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mul");
    let d = dir.to_str().unwrap();
    let sweep = [
        "verify",
        "-u",
        "mul",
        "-f",
        "e4m3",
        "-r",
        "dyn",
        "-s",
        "dyn",
        "--exhaustive",
        "--shards",
        "4",
        "--threads",
        "1",
    ];

    // plan: four shards of 393216 vectors, an estimate from a measured rate.
    let mut args = vec!["sweep", "plan"];
    args.extend(sweep);
    let (code, out, err) = fp8gen(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("1572864 vectors in 4 shards"), "{out}");
    assert!(out.contains("measured now on this machine"), "{out}");
    assert_eq!(out.matches("393216 vectors").count(), 4, "{out}");

    // slurm --submit, wait, merge: PASS over every shard.
    let mut args = vec!["sweep", "slurm"];
    args.extend(sweep);
    args.extend(["--rate", "1e7", "--out", d, "--submit"]);
    let (code, out, err) = fp8gen(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("4 to run"), "{out}");
    let id = job_id(&out);
    wait_for(&id, Duration::from_secs(600));
    assert_eq!(
        results(&dir),
        4,
        "logs: {:?}",
        std::fs::read_dir(dir.join("logs"))
    );
    let (code, out, err) = fp8gen(&["merge", d]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("4 of 4 shards, 1572864 vectors, 0 mismatches"),
        "{out}"
    );
    assert!(out.trim_end().ends_with("PASS"), "{out}");

    // Running it again submits nothing: every job has a result.
    let (code, out, err) = fp8gen(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("every job has a result"), "{out}");

    // A task cancelled before it ran: the merge names the gap and fails; resubmitting runs
    // only that task; then the merge passes.
    let dir2 = tmp.path().join("fma");
    let d2 = dir2.to_str().unwrap();
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .to_string();
    let mut args = FMA_SWEEP.to_vec();
    args.extend(["--cpus-per-task", &cores, "--out", d2, "--submit"]);
    let (code, out, err) = fp8gen(&args);
    assert_eq!(code, 0, "{out}{err}");
    let id = job_id(&out);
    let st = Command::new("scancel")
        .arg(format!("{id}_2"))
        .status()
        .expect("scancel");
    assert!(st.success());
    wait_for(&id, Duration::from_secs(600));
    let (code, out, _) = fp8gen(&["merge", d2]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("1 of 3 shards missing: 2"), "{out}");
    assert!(out.trim_end().ends_with("FAIL"), "{out}");
    let mut args = FMA_SWEEP.to_vec();
    args.extend(["--out", d2, "--submit"]);
    let (code, out, err) = fp8gen(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2 finished, 1 to run"), "{out}");
    assert!(out.contains("(array 2)"), "{out}");
    let id = job_id(&out);
    wait_for(&id, Duration::from_secs(600));
    let (code, out, err) = fp8gen(&["merge", d2]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("3 of 3 shards, 200000 vectors, 0 mismatches"),
        "{out}"
    );

    // merge refuses to combine shards of different cores.
    let (code, _, err) = fp8gen(&["merge", d, d2]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("merge refuses to combine"), "{err}");

    // A small QoR sweep: two synthesis points, merged into qor.csv.
    if fpga::tools::find(fpga::tools::Tool::Yosys).is_err() {
        panic!("the QoR sweep needs yosys + nextpnr: run scripts/setup-fpga.sh");
    }
    let dir3 = tmp.path().join("qor");
    let d3 = dir3.to_str().unwrap();
    let (code, out, err) = fp8gen(&[
        "sweep",
        "slurm",
        "qor",
        "--units",
        "mul",
        "--formats",
        "e4m3",
        "--stages",
        "0,1",
        "--targets",
        "ecp5-25k",
        "--out",
        d3,
        "--submit",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let id = job_id(&out);
    wait_for(&id, Duration::from_secs(900));
    let (code, out, err) = fp8gen(&["merge", d3]);
    assert_eq!(code, 0, "{out}{err}");
    let csv = std::fs::read_to_string(dir3.join("qor.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("unit,format,stages,target"), "{csv}");
    assert!(rows[1].starts_with("mul,e4m3,0,ecp5-25k,on,"), "{csv}");
    assert!(rows[2].starts_with("mul,e4m3,1,ecp5-25k,on,"), "{csv}");
}
