//! No Pod-manifest field is silently ignored: the table of every v1.31 Pod, ObjectMeta,
//! PodSpec and Container field (`src/scenario/fields.rs`) is walked field by field through
//! `podsim check`, and the README's field list must be the table.

use assert_cmd::Command;
use podsim::scenario::fields::{Field, Object, Treatment, FIELDS};

/// A scenario with one field added to the pod template at its place (`line` is the field as
/// one YAML line, without indentation).
fn scenario(object: Object, line: &str, init_container: bool) -> String {
    let at = |o: Object| if o == object { line } else { "" };
    let init = if init_container {
        format!(
            "\n          initContainers:\n            - name: side\n              image: registry.example/side:1\n              {line}"
        )
    } else {
        String::new()
    };
    let container = if init_container {
        ""
    } else {
        at(Object::Container)
    };
    format!(
        "apiVersion: podsim/v1alpha1
kind: Scenario
metadata: {{name: field}}
spec:
  pods:
    - template:
        {}
        metadata:
          name: web
          {}
        spec:
          {}{init}
          containers:
            - name: app
              image: registry.example/app:1
              {container}
",
        at(Object::Pod),
        at(Object::Metadata),
        at(Object::PodSpec),
    )
}

/// The path `check` names for the field.
fn path(f: &Field, init_container: bool) -> String {
    let base = "spec.pods[0].template";
    match f.object {
        Object::Pod => format!("{base}.{}", f.name),
        Object::Metadata => format!("{base}.metadata.{}", f.name),
        Object::PodSpec => format!("{base}.spec.{}", f.name),
        Object::Container if init_container => {
            format!("{base}.spec.initContainers[0].{}", f.name)
        }
        Object::Container => format!("{base}.spec.containers[0].{}", f.name),
    }
}

/// Fields the base scenario already writes.
fn in_base(f: &Field) -> bool {
    matches!(
        (f.object, f.name),
        (Object::Pod, "metadata" | "spec")
            | (Object::Metadata, "name")
            | (Object::PodSpec, "containers")
            | (Object::Container, "name" | "image")
    )
}

fn check(text: &str) -> (i32, String) {
    let out = Command::cargo_bin("podsim")
        .unwrap()
        .args(["check", "-"])
        .write_stdin(text)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap_or(-1), stderr)
}

#[test]
fn every_field_is_modelled_noted_or_refused_as_the_table_says() {
    let mut failures = Vec::new();
    for f in FIELDS {
        // A sidecar's `restartPolicy: Always` belongs on an init container.
        let init = f.object == Object::Container && f.name == "restartPolicy";
        let line = if in_base(f) {
            String::new()
        } else {
            format!("{}: {}", f.name, f.example)
        };
        let text = scenario(f.object, &line, init);
        let (code, stderr) = check(&text);
        let p = path(f, init);
        let about = |kind: &str| {
            stderr
                .lines()
                .filter(|l| l.starts_with(kind) && l.contains(&format!(": {p}:")))
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        let ok = match f.treatment {
            Treatment::Modelled(_) => {
                code == 0 && about("note:").is_empty() && about("error:").is_empty()
            }
            Treatment::NoEffect(why) => {
                let notes = about("note:");
                code == 0 && notes.len() == 1 && notes[0].ends_with(&format!("{p}: {why}"))
            }
            Treatment::NotBuilt(need) => {
                let errors = about("error:");
                code == 2
                    && errors.len() == 1
                    && errors[0].ends_with(&format!("{p}: not built yet: {need}"))
            }
        };
        // Nothing else is reported about the scenario.
        let others = stderr
            .lines()
            .filter(|l| (l.starts_with("note:") || l.starts_with("error:")) && !l.contains(&p))
            .count();
        if !ok || others > 0 {
            failures.push(format!(
                "{} `{}` ({:?}): exit {code}\n{stderr}",
                f.object.title(),
                f.name,
                f.treatment
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_misspelt_field_gets_a_note_with_the_nearest_name() {
    let text = scenario(Object::Container, "imagePulPolicy: Always", false);
    let (code, stderr) = check(&text);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "spec.pods[0].template.spec.containers[0].imagePulPolicy: not a field of a v1.31 \
             Container; ignored; did you mean `imagePullPolicy`?"
        ),
        "{stderr}"
    );
}

#[test]
fn refused_values_of_checked_fields_are_errors() {
    for (object, line, what) in [
        (
            Object::Pod,
            "apiVersion: apps/v1",
            "a pod template is a `v1` Pod manifest",
        ),
        (
            Object::Pod,
            "kind: Deployment",
            "a pod template is a `Pod` Pod manifest",
        ),
        (
            Object::PodSpec,
            "os: {name: windows}",
            "the simulated node runs Linux",
        ),
        (
            Object::Container,
            "imagePullPolicy: Never",
            "needs images preloaded",
        ),
    ] {
        let (code, stderr) = check(&scenario(object, line, false));
        assert_eq!(code, 2, "{line}: {stderr}");
        assert!(stderr.contains(what), "{line}: {stderr}");
        assert!(stderr.contains("<stdin>:"), "{line}: {stderr}");
    }
}

/// The README lists the table exactly (between the two marker comments). To rewrite the
/// README's list after changing the table: `PODSIM_FIELDS_RECORD=1 cargo test --test main
/// pod_fields`.
#[test]
fn the_readme_lists_the_table() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(file).unwrap();
    let (begin, end) = ("<!-- pod-fields:begin -->", "<!-- pod-fields:end -->");
    let a = readme.find(begin).expect("the begin marker") + begin.len();
    let b = readme.find(end).expect("the end marker");
    let want = podsim::scenario::fields::markdown();
    if std::env::var("PODSIM_FIELDS_RECORD").is_ok_and(|v| v == "1") {
        let text = format!("{}{want}{}", &readme[..a], &readme[b..]);
        std::fs::write(file, text).unwrap();
        return;
    }
    assert!(
        readme[a..b] == want,
        "README.md's Pod field list differs from src/scenario/fields.rs; rewrite it with \
         PODSIM_FIELDS_RECORD=1 cargo test --test main pod_fields"
    );
}
