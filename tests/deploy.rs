//! The deployment examples, checked without a cluster or a container engine: the
//! Dockerfile's structure, the Indexed Job's shard and merge commands run locally the
//! way the Jobs run them, and the README's CI workflow run step by step.

use crate::readme::{fenced_blocks, scratch, sh};
use serde_json::Value;
use std::path::Path;

fn yaml_docs(path: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split("\n---\n")
        .map(|doc| serde_saphyr::from_str::<Value>(doc).unwrap_or_else(|e| panic!("{path}: {e}")))
        .collect()
}

fn job_command(path: &str) -> String {
    let docs = yaml_docs(path);
    let job = docs.iter().find(|d| d["kind"] == "Job").expect("a Job");
    let cmd = &job["spec"]["template"]["spec"]["containers"][0]["command"];
    assert_eq!(cmd[0], "sh", "{path}: the container runs `sh -c ...`");
    cmd[2].as_str().unwrap().to_string()
}

fn image(path: &str) -> String {
    let docs = yaml_docs(path);
    let job = docs.iter().find(|d| d["kind"] == "Job").unwrap();
    let c = &job["spec"]["template"]["spec"]["containers"][0];
    c["image"].as_str().unwrap().to_string()
}

fn cargo_version() -> String {
    let toml = std::fs::read_to_string("Cargo.toml").unwrap();
    let line = toml.lines().find(|l| l.starts_with("version = ")).unwrap();
    line.trim_start_matches("version = ")
        .trim_matches('"')
        .to_string()
}

/// The Dockerfile builds the image the Jobs name: two stages, the second copying the
/// release binary out of the first; every `COPY` source exists and is not excluded by
/// `.dockerignore`; only known instructions are used.
#[test]
fn dockerfile_builds_the_image_the_jobs_name() {
    let text = std::fs::read_to_string("Dockerfile").unwrap();
    let ignore = std::fs::read_to_string(".dockerignore").unwrap();
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    const KNOWN: [&str; 10] = [
        "FROM",
        "WORKDIR",
        "COPY",
        "RUN",
        "USER",
        "CMD",
        "ENTRYPOINT",
        "ENV",
        "ARG",
        "LABEL",
    ];
    let mut stages = Vec::new();
    let mut continued = false;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        let cont = continued;
        continued = line.ends_with('\\');
        if cont || line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let instr = words.next().unwrap();
        assert!(
            KNOWN.contains(&instr),
            "Dockerfile:{}: unknown instruction {instr}",
            n + 1
        );
        let args: Vec<&str> = words.collect();
        match instr {
            "FROM" => stages.push(args.get(2).copied().unwrap_or("").to_string()),
            "COPY" if args[0].starts_with("--from=") => {
                let from = args[0].trim_start_matches("--from=");
                assert!(
                    stages.iter().any(|s| s == from),
                    "Dockerfile:{}: no stage {from}",
                    n + 1
                );
                assert_eq!(args[1], "/src/target/release/podsim");
            }
            "COPY" => {
                for src in &args[..args.len() - 1] {
                    assert!(
                        Path::new(src).exists(),
                        "Dockerfile:{}: COPY {src}: no such path",
                        n + 1
                    );
                    let top = src.split('/').next().unwrap();
                    assert!(
                        !ignored.contains(&top),
                        "Dockerfile:{}: {src} is in .dockerignore",
                        n + 1
                    );
                }
            }
            _ => {}
        }
    }
    assert_eq!(
        stages,
        ["build", ""],
        "a build stage, then the runtime stage"
    );
    assert!(text.contains("cargo build --release --locked --bin podsim"));
    assert!(text.contains("COPY scenarios /podsim/scenarios") && text.contains("WORKDIR /podsim"));
    let tag = format!("podsim:{}", cargo_version());
    for job in [
        "deploy/sweep-indexed-job.yaml",
        "deploy/sweep-merge-job.yaml",
    ] {
        assert_eq!(
            image(job),
            tag,
            "{job} names the image the Dockerfile's comment builds"
        );
    }
    assert!(text.contains(&format!("docker build -t {tag} .")));
}

/// The Indexed Job's command, run locally for each completion index, then the merge
/// Job's: the merged directory equals the unsharded sweep's.
#[test]
fn indexed_job_shards_merge_into_the_unsharded_sweep() {
    let dir = scratch("indexed-job");
    let shard_cmd = job_command("deploy/sweep-indexed-job.yaml");
    let merge_cmd = job_command("deploy/sweep-merge-job.yaml");
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    let local = |cmd: &str| cmd.replace("/results", &results.display().to_string());
    for index in 0..4 {
        let cmd = format!("JOB_COMPLETION_INDEX={index}; {}", local(&shard_cmd));
        let out = sh(&dir, &cmd);
        assert_eq!(
            out.status.code(),
            Some(0),
            "shard {index}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let merged = sh(&dir, &local(&merge_cmd));
    let whole_cmd = "podsim sweep scenarios/sweeps/shutdown-vs-slow-stop.yaml --jobs 2 --out whole";
    let whole = sh(&dir, whole_cmd);
    assert_eq!(
        merged.status.code(),
        whole.status.code(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    assert!(matches!(merged.status.code(), Some(0 | 1)));
    for file in ["manifest.json", "runs.jsonl", "summary.json"] {
        let a = std::fs::read(results.join("merged").join(file)).unwrap();
        let b = std::fs::read(dir.join("whole").join(file)).unwrap();
        assert!(a == b, "merged {file} differs from the unsharded sweep's");
    }
    assert!(results.join("merged/junit.xml").exists());
}

/// The README's "Using podsim in CI" workflow: its `podsim` steps run in order, exit 0,
/// and leave the files the workflow uploads.
#[test]
fn readme_ci_workflow_runs() {
    let text = std::fs::read_to_string("README.md").unwrap();
    let section = text
        .split("\n## Using podsim in CI")
        .nth(1)
        .expect("README section \"Using podsim in CI\"");
    let section = section.split("\n## ").next().unwrap();
    let (_, workflow) = fenced_blocks(section)
        .into_iter()
        .find(|(lang, _)| lang == "yaml")
        .expect("the workflow block");
    let doc: Value = serde_saphyr::from_str(&workflow).unwrap();
    let jobs = doc["jobs"].as_object().unwrap();
    let steps = jobs.values().next().unwrap()["steps"]
        .as_array()
        .unwrap()
        .clone();
    let dir = scratch("ci-workflow");
    let mut ran = 0;
    let mut uploads = Vec::new();
    for step in &steps {
        if let Some(run) = step["run"].as_str() {
            if run.trim_start().starts_with("podsim ") {
                let out = sh(&dir, run);
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{run}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
        }
        if let Some(path) = step["with"]["path"].as_str() {
            uploads.push(path.trim_end_matches('/').to_string());
        }
    }
    assert!(
        ran >= 2,
        "the workflow runs podsim at least twice (check, sweep)"
    );
    assert!(!uploads.is_empty(), "the workflow uploads its results");
    for up in uploads {
        let up = dir.join(up);
        for file in ["summary.json", "junit.xml", "report.html"] {
            assert!(up.join(file).exists(), "{} has no {file}", up.display());
        }
    }
}
