//! `kind: Sweep` files: the seeds, profiles and parameter grid, and the scenario they name
//! (validated as is and with every parameter value).

use super::primitives::{expected, idx, int, list, obj, profile, string, Cx, Obj, Unknown};
use super::{
    hash_of, kind_check, metadata, parse_root, read_text, scenario, SweepFile, SweepParameter,
};
use crate::scenario::defaults;
use crate::scenario::error::Problem;
use crate::scenario::overrides;
use crate::scenario::schema::{Kind, Loc, Node};
use std::collections::BTreeSet;
use std::path::Path;

/// Renders a parameter value as YAML text usable as a `--set` value.
fn value_text(n: &Node) -> String {
    crate::scenario::label::flow_yaml(n)
}

pub(super) fn sweep(cx: &mut Cx, root: &Node, source: &str, base_dir: &Path) -> Option<SweepFile> {
    let hash = hash_of(root);
    let top = kind_check(cx, root, &["Sweep"])?;
    let (name, description) = metadata(cx, &top);
    let spec_node = top.req(cx, "spec")?;
    let fields = ["scenario", "seeds", "profiles", "parameters"];
    let spec = obj(cx, spec_node, "spec", &fields, Unknown::Error)?;
    let seeds = int(cx, spec.get("seeds"), "spec.seeds", 1, u64::MAX.into())
        .map_or(defaults::SWEEP_SEEDS, |s| s as u64);
    let profiles = profiles(cx, &spec);
    let params = parameters(cx, &spec);
    // The scenario: must exist, validate, and validate with every parameter value.
    let sn = spec.req(cx, "scenario")?;
    let rel = string(cx, Some(sn), "spec.scenario")?;
    if rel == crate::scenario::file::STDIO_PATH {
        let m = "`-` (standard input) cannot be a sweep's scenario: name the scenario file";
        cx.err(sn.loc, "spec.scenario", m);
        return None;
    }
    let scenario_path = base_dir.join(&rel);
    let spath = scenario_path.display().to_string();
    let text = match read_text(&scenario_path) {
        Ok(t) => t,
        Err((0, _, e)) => {
            let e = e.trim_start_matches("cannot read file: ");
            cx.err(
                sn.loc,
                "spec.scenario",
                format!("cannot read `{spath}`: {e}"),
            );
            return None;
        }
        Err((line, col, message)) => {
            cx.problems.push(Problem {
                file: spath.clone(),
                line,
                col,
                path: String::new(),
                message,
            });
            cx.err(
                sn.loc,
                "spec.scenario",
                "the scenario file is invalid (see above)",
            );
            return None;
        }
    };
    let sroot = match parse_root(&spath, &text) {
        Ok(r) => r,
        Err(e) => {
            cx.problems.extend(e.problems);
            cx.err(
                sn.loc,
                "spec.scenario",
                "the scenario file is invalid (see above)",
            );
            return None;
        }
    };
    let mut scx = Cx::new(&spath, cx.names);
    let base = scenario(&mut scx, &sroot, &spath);
    let notes = match scx.finish(base) {
        Ok((s, notes)) => Some((s, notes)),
        Err(e) => {
            let n = e.problems.len();
            cx.problems.extend(e.problems);
            cx.err(
                sn.loc,
                "spec.scenario",
                format!(
                    "the scenario has {n} problem{} (listed with its file name)",
                    if n == 1 { "" } else { "s" }
                ),
            );
            None
        }
    };
    let (base, base_notes) = notes?;
    check_values(cx, &sroot, &spath, &params);
    Some(SweepFile {
        name,
        description,
        source: source.to_owned(),
        hash,
        scenario_path,
        scenario: base,
        seeds,
        profiles,
        parameters: params.into_iter().map(|p| p.1).collect(),
        notes: base_notes,
    })
}

/// `spec.profiles`: each a known profile, none twice.
fn profiles(cx: &mut Cx, spec: &Obj) -> Vec<String> {
    let mut profiles = Vec::new();
    for (i, p) in list(cx, spec.get("profiles"), "spec.profiles")
        .iter()
        .enumerate()
    {
        let pp = idx("spec.profiles", i);
        if let Some(prof) = profile(cx, Some(p), &pp) {
            let prof = prof.to_owned();
            let r = cx.names.release(&prof);
            if profiles.contains(&prof) {
                cx.err(p.loc, &pp, format!("profile `{prof}` is listed twice"));
            } else if let Some(q) = profiles.iter().find(|q| cx.names.release(q) == r) {
                let m = format!("profile `{prof}` is the release of `{q}`, listed before ({r}): one point per release");
                cx.err(p.loc, &pp, m);
            } else {
                profiles.push(prof);
            }
        } else if p.kind == Kind::Null {
            expected(cx, p, &pp, "a profile name");
        }
    }
    profiles
}

/// A parameter: (index in spec.parameters, parameter, parsed path, value nodes, the path's
/// node).
type Param<'n> = (
    usize,
    SweepParameter,
    Vec<overrides::Seg>,
    &'n [Node],
    &'n Node,
);

/// `spec.parameters`: each path valid and swept once, each with at least one value.
fn parameters<'n>(cx: &mut Cx, spec: &Obj<'n>) -> Vec<Param<'n>> {
    let mut params: Vec<Param> = Vec::new();
    let mut seen_paths = BTreeSet::new();
    for (i, item) in list(cx, spec.get("parameters"), "spec.parameters")
        .iter()
        .enumerate()
    {
        let ip = idx("spec.parameters", i);
        let Some(o) = obj(cx, item, &ip, &["path", "values"], Unknown::Error) else {
            continue;
        };
        let pn = o.req(cx, "path");
        let path = string(cx, pn, &o.at("path"));
        let vn = o.req(cx, "values");
        let values = list(cx, vn, &o.at("values"));
        if let Some(vn) = vn {
            if values.is_empty() && matches!(vn.kind, Kind::Seq(_)) {
                cx.err(vn.loc, &o.at("values"), "needs at least one value");
            }
        }
        let (Some(path), Some(pn)) = (path, pn) else {
            continue;
        };
        let segs = match overrides::parse_path(&path) {
            Ok(s) => s,
            Err(m) => {
                cx.err(pn.loc, &o.at("path"), m);
                continue;
            }
        };
        if !seen_paths.insert(path.clone()) {
            cx.err(pn.loc, &o.at("path"), format!("`{path}` is swept twice"));
            continue;
        }
        let texts = values.iter().map(value_text).collect();
        params.push((
            i,
            SweepParameter {
                path,
                values: texts,
            },
            segs,
            values,
            pn,
        ));
    }
    params
}

/// Validates the scenario `sroot` (from `spath`) with each parameter value applied alone;
/// a problem at the value if the scenario is then invalid.
fn check_values(cx: &mut Cx, sroot: &Node, spath: &str, params: &[Param]) {
    for (pi, param, segs, nodes, pn) in params {
        for (k, vnode) in nodes.iter().enumerate() {
            let mut tree = sroot.clone();
            let mut v = vnode.clone();
            v.relocate(Loc::Set(0));
            let vp = format!("spec.parameters[{pi}].values[{k}]");
            if let Err(m) = overrides::apply(&mut tree, segs, v, Loc::Set(0)) {
                cx.err(vnode.loc, &vp, m);
                break;
            }
            let mut pcx = Cx::new(spath, cx.names);
            pcx.sets.push(format!("--set {}", param.path));
            scenario(&mut pcx, &tree, spath);
            if let Some(first) = pcx.problems.first() {
                // A path into no podsim field is the path's problem, not the value's.
                let unknown = first.message.starts_with("unknown field")
                    || first.message.starts_with("unknown behaviour switch");
                if unknown && param.path.starts_with(&first.path) {
                    let pp = format!("spec.parameters[{pi}].path");
                    cx.err(pn.loc, &pp, format!("{}: {}", first.path, first.message));
                    break;
                }
                cx.err(
                    vnode.loc,
                    &vp,
                    format!(
                        "with this value the scenario is invalid: {}: {}",
                        first.path, first.message
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_util::MIN;
    use super::super::{check_file, load_sweep_str};

    #[test]
    fn sweep_file() {
        let names = crate::names();
        let dir = std::env::temp_dir().join(format!("podsim-sweep-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s.yaml"), MIN).unwrap();
        let sweep = |spec: &str| {
            load_sweep_str(
                "sw.yaml",
                &format!("apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {{name: sw}}\nspec:\n{spec}"),
                &dir,
                &names,
            )
        };
        let s = sweep("  scenario: s.yaml\n  seeds: 10\n  profiles: [current]\n  parameters:\n    - path: spec.runtime.latencies.stopContainer.fixed\n      values: [100ms, 1s]\n    - path: spec.api.watchDelay\n      values: [{fixed: 1s}]\n").unwrap();
        assert_eq!(s.seeds, 10);
        assert_eq!(s.scenario.name, "m");
        assert_eq!(s.parameters[0].values, ["100ms", "1s"]);
        assert_eq!(s.parameters[1].values, ["{fixed: 1s}"]);
        let e = sweep("  scenario: s.yaml\n  seeds: 0\n  profiles: [v1.99]\n  parameters:\n    - path: spec.horizon\n      values: [10s, -1s]\n").unwrap_err();
        let paths: Vec<&str> = e.problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "spec.seeds",
                "spec.profiles[0]",
                "spec.parameters[0].values[1]"
            ],
            "{e}"
        );
        let e = sweep("  scenario: nope.yaml\n").unwrap_err();
        assert_eq!(e.problems[0].path, "spec.scenario");
        std::fs::write(dir.join("bad.yaml"), MIN.replace("name: m", "name: M")).unwrap();
        let e = sweep("  scenario: bad.yaml\n").unwrap_err();
        assert_eq!(e.problems.len(), 2, "{e}");
        // check_file dispatches on `kind`.
        assert_eq!(check_file(&dir.join("s.yaml"), &names), Ok(Vec::new()));
        let sw = "apiVersion: podsim/v1alpha1\nkind: Sweep\nmetadata: {name: sw}\nspec: {scenario: s.yaml}\n";
        std::fs::write(dir.join("sw.yaml"), sw).unwrap();
        assert_eq!(check_file(&dir.join("sw.yaml"), &names), Ok(Vec::new()));
        std::fs::write(dir.join("k.yaml"), sw.replace("Sweep", "Sweeps")).unwrap();
        let e = check_file(&dir.join("k.yaml"), &names).unwrap_err();
        assert_eq!(e.problems.len(), 1, "{e}");
        assert_eq!(
            (e.problems[0].path.as_str(), e.problems[0].line),
            ("kind", 2)
        );
        assert!(check_file(&dir.join("missing.yaml"), &names).is_err());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
