use super::*;
use crate::engine::methods;
use crate::engine::{MethodKind, Params, Value};

const FULL: &str = r#"
theme = "light"

[defaults]
task = "game24"
method = "tot-dfs"
provider = "sim"
breadth = 5
n_generate = 1
n_evaluate = 3
generator = "sample"
evaluator = "vote"
select = "greedy"
threshold = 3
max_states = 100
samples = 10
tool_mode = "native"
max_steps = 5
majority_threshold = 0.6
temperature = 0.7
seed = 42
sim_noise = 1.5
concurrency = 8
memory = "study-a"

[providers.local]
kind = "openai"
base_url = "http://localhost:8080/v1"

[prices."gpt-4"]
input = 30.0
output = 60.0

[[keymap]]
on = "ctrl-s"
run = "save_as"
desc = "Save"

[[keymap]]
on = ["q"]
run = "none"
"#;

#[test]
fn full_file_parses_every_section() {
    let (config, warnings) = Config::parse(FULL, "config.toml");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.theme.as_deref(), Some("light"));
    let search = ParamPatch::of(MethodKind::from_name("tot-dfs").unwrap())
        .with("temperature", 0.7)
        .with("seed", 42)
        .with("samples", 10)
        .with("generator", "sample")
        .with("n_generate", 1)
        .with("evaluator", "vote")
        .with("n_evaluate", 3)
        .with("max_steps", 5)
        .with("tool_mode", "native")
        .with("breadth", 5)
        .with("select", "greedy")
        .with("threshold", 3.0)
        .with("max_states", 100)
        .with("majority_threshold", 0.6);
    let expected = RunDefaults {
        task: Some("game24".into()),
        provider: Some("sim".into()),
        sim_noise: Some(1.5),
        concurrency: Some(8),
        memory: Some("study-a".into()),
        search,
    };
    assert_eq!(config.defaults, expected);
    assert_eq!(config.keymap.len(), 2);
    assert_eq!(config.keymap[0].on, ["ctrl-s"]);
    assert_eq!(config.keymap[1].entry, 2);
    // The provider sections come from the same read.
    let providers = config.providers().unwrap();
    assert_eq!(providers.profile("local").and_then(|p| p.base_url).as_deref(), Some("http://localhost:8080/v1"));
    assert_eq!(providers.price_table().lookup("gpt-4").map(|p| p.output), Some(60.0));
}

#[test]
fn empty_file_is_all_defaults() {
    let (config, warnings) = Config::parse("", "config.toml");
    assert!(warnings.is_empty());
    assert_eq!(config, Config::default());
}

#[test]
fn a_bad_key_is_named_and_the_rest_kept() {
    let text = r#"
theme = 3
colours = "red"
[defaults]
breadth = "five"
method = "tot-bs"
n_evaluate = -1
temperature = 0.5
threshold = nan
majority_threshold = -inf
samples = 4
colour = "red"
[[keymap]]
on = "x"
run = "step"
[[keymap]]
on = 7
run = "step"
"#;
    let (config, warnings) = Config::parse(text, "config.toml");
    assert_eq!(config.theme, None);
    let d = &config.defaults.search;
    assert_eq!((d.get("breadth"), d.method, d.get("n_evaluate")), (None, None, None));
    assert_eq!((d.get("threshold"), d.get("majority_threshold")), (None, None), "non-finite numbers are refused");
    assert_eq!(d.get("temperature"), Some(&Value::Real(0.5)));
    assert_eq!(d.get("samples"), Some(&Value::Whole(4)));
    let methods = methods::names().join(", ");
    let expected = [
        "config.toml: theme: expected a theme name, found integer 3; ignored".to_string(),
        "config.toml: defaults.breadth: found string \"five\": it must be a whole number from 1 to 100000; using the default".into(),
        format!("config.toml: defaults.method: expected one of {methods}, found string \"tot-bs\"; using the default"),
        "config.toml: defaults.n_evaluate: found integer -1: it must be a whole number from 1 to 1000; using the default".into(),
        "config.toml: defaults.threshold: found float nan: it must be a finite number; using the default".into(),
        "config.toml: defaults.majority_threshold: found float -inf: it must be a number from 0 to 1; using the default".into(),
        "config.toml: colours: unknown key (known: theme, defaults, keymap, providers, prices, break, mcp, serve); ignored".into(),
    ];
    for line in expected {
        assert!(warnings.contains(&line), "missing {line:?} in {warnings:#?}");
    }
    assert!(warnings.iter().any(|w| w.starts_with("config.toml: defaults.colour: unknown key (known: task, ")));
    assert!(warnings.iter().any(|w| w.starts_with("config.toml: keymap entry 2: `on` must be a key string")));
    assert_eq!(warnings.len(), 9, "{warnings:#?}");
    assert_eq!(config.keymap.len(), 1);
}

#[test]
fn malformed_file_is_one_warning_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "theme = \"dark\"\n[defaults\nbreadth = 3\n").unwrap();
    let (config, warnings) = Config::load_from(dir.path());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let file = dir.path().join("config.toml").display().to_string();
    assert!(warnings[0].starts_with(&format!("{file}: line 2, column")), "{}", warnings[0]);
    assert_eq!((config.theme, config.defaults), (None, RunDefaults::default()));
    // A run with a real provider stops on it, naming the file.
    let e = config.providers.unwrap_err().to_string();
    assert!(e.starts_with(&file), "{e}");
}

#[test]
fn load_from_reads_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let (config, warnings) = Config::load_from(dir.path());
    assert!(warnings.is_empty(), "a missing file is fine");
    assert_eq!(config.theme, None);

    std::fs::write(dir.path().join("config.toml"), FULL).unwrap();
    let (config, warnings) = Config::load_from(dir.path());
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.theme.as_deref(), Some("light"));
    assert_eq!(config.themes_dir(), Some(dir.path().join("themes")));

    // A directory where the file should be is unreadable: one warning.
    let odd = tempfile::tempdir().unwrap();
    std::fs::create_dir(odd.path().join("config.toml")).unwrap();
    let (_, warnings) = Config::load_from(odd.path());
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains("config.toml: cannot read"), "{}", warnings[0]);
}

#[test]
fn a_named_file_must_exist_be_a_file_and_parse() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let e = Config::load(Some(&missing)).unwrap_err().to_string();
    assert!(
        e.starts_with("--config ") && e.contains("nope.toml: cannot read it") && e.contains("leave --config out"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1);
    let e = Config::load(Some(Path::new("/dev/null"))).unwrap_err().to_string();
    assert!(e.contains("/dev/null: cannot read it: it is a device, not a file"), "{e}");
    let e = Config::load(Some(dir.path())).unwrap_err().to_string();
    assert!(e.contains("cannot read it"), "a folder: {e}");
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "theme = \"dark\"\n[defaults\nbreadth = 2\n").unwrap();
    let e = Config::load(Some(&bad)).unwrap_err().to_string();
    assert!(e.contains("bad.toml: not valid TOML: line 2") && e.contains("fix the file or leave --config out"), "{e}");
    // A file that parses but has a bad key still loads, with a warning naming the key.
    std::fs::write(&bad, "theme = 3\n").unwrap();
    let (config, warnings) = Config::load(Some(&bad)).unwrap();
    assert_eq!(config.theme, None);
    assert!(warnings.len() == 1 && warnings[0].contains("theme"), "{warnings:?}");
    // The same malformed file at the usual place is a warning naming it, and the defaults.
    let odd = tempfile::tempdir().unwrap();
    std::fs::write(odd.path().join("config.toml"), "[defaults\n").unwrap();
    let (config, warnings) = Config::load_from(odd.path());
    assert_eq!(config.defaults, RunDefaults::default());
    assert!(warnings.len() == 1 && warnings[0].contains("config.toml: line 1"), "{warnings:?}");
}

#[test]
fn which_file_flag_then_file_variable_then_directory_variable_then_platform() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    };
    let platform = Some(PathBuf::from("/home/u/.config/thoughtscope"));
    let both = vars(&[(CONFIG_FILE_ENV, "/a/file.toml"), (CONFIG_DIR_ENV, "/b")]);
    let flag = Path::new("/c/flag.toml");
    assert_eq!(locate_with(Some(flag), &both, platform.clone()), Some((flag.to_path_buf(), true)));
    assert_eq!(locate_with(None, &both, platform.clone()), Some((PathBuf::from("/a/file.toml"), false)));
    let dir = vars(&[(CONFIG_FILE_ENV, ""), (CONFIG_DIR_ENV, "/b")]);
    assert_eq!(locate_with(None, &dir, platform.clone()), Some((PathBuf::from("/b/config.toml"), false)));
    let unset = vars(&[(CONFIG_DIR_ENV, "")]);
    let expected = Some((PathBuf::from("/home/u/.config/thoughtscope/config.toml"), false));
    assert_eq!(locate_with(None, &unset, platform), expected);
    assert_eq!(locate_with(None, &unset, None), None);
    if let Some(dir) = default_dir() {
        assert!(dir.ends_with("thoughtscope"), "{}", dir.display());
    }
}

#[test]
fn flag_over_file_over_default() {
    let file = ParamPatch::default()
        .with("breadth", 2)
        .with("n_evaluate", 1)
        .with("generator", "sample")
        .with("lenient", true);
    let flags = ParamPatch::default().with("breadth", 7).with("temperature", 0.2);
    let p = ParamPatch::resolve(&flags, &file).unwrap();
    let d = Params::default();
    assert_eq!(p.whole("breadth"), Some(7), "the flag wins over the file");
    assert_eq!(
        (p.whole("n_evaluate"), p.word("generator"), p.get("lenient")),
        (Some(1), Some("sample"), Some(&Value::Flag(true))),
        "the file over the default"
    );
    assert_eq!(p.get("temperature"), Some(&Value::Real(0.2)));
    assert_eq!((p.get("max_states"), p.get("select"), p.method), (None, d.get("select"), d.method));
    assert_eq!(ParamPatch::resolve(&ParamPatch::default(), &ParamPatch::default()), Ok(d));
}

/// Every declared parameter reaches the chosen method's parameters from a patch, and
/// no other: a patch holding every parameter of every method gives each method its own.
#[test]
fn every_declared_parameter_reaches_its_methods_and_no_other() {
    let mut all = ParamPatch::default();
    let mut given = Vec::new();
    for p in methods::all_params() {
        let value = crate::engine::params::tests::alternative(p.decl);
        all = all.with(p.decl.name, value.clone());
        given.push((p.decl.name, value));
    }
    for info in methods::REGISTRY {
        let flags = ParamPatch::of(info.kind);
        let params = ParamPatch::resolve(&flags, &all);
        let Ok(params) = params else {
            // A joint constraint of the method's (e.g. retreval's weights) may refuse the mix; each value still passed.
            continue;
        };
        for (name, value) in &given {
            match info.param(name) {
                Some(_) => assert_eq!(params.get(name), Some(value), "{}: {name} reaches it", info.kind),
                None => assert_eq!(params.get(name), None, "{}: {name} is not its", info.kind),
            }
        }
        assert_eq!(all.not_read_by(info.kind).is_some(), info.declared().len() < given.len());
    }
    // The hybrids default to the ReAct paper's 21 samples.
    let hybrid = ParamPatch::of(MethodKind::from_name("cot-sc-react").unwrap());
    assert_eq!(ParamPatch::resolve(&hybrid, &ParamPatch::default()).unwrap().whole("samples"), Some(21));
}

#[test]
fn every_patch_key_is_read_from_the_file() {
    // The file accepts exactly the patch's keys plus the run's own.
    let keys = ParamPatch::keys();
    let text: String = keys.iter().map(|k| format!("{k} = []\n")).collect();
    let (_, warnings) = Config::parse(&format!("[defaults]\n{text}"), "c.toml");
    assert_eq!(warnings.len(), keys.len(), "{warnings:#?}");
    assert!(warnings.iter().all(|w| w.contains("using the default")), "{warnings:#?}");
    for key in RUN_KEYS {
        assert!(!keys.contains(key), "{key} is a run setting and no method's parameter");
    }
}

/// The reference's parameter table is the declarations' (`params::readme_table`): a
/// method's new or changed parameter shows here until `thoughtscope docs` writes it.
#[test]
fn the_reference_lists_every_declared_parameter_as_declared() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reference/parameters.md")).unwrap();
    let (begin, end) = ("<!-- method parameters: begin -->\n", "<!-- method parameters: end -->");
    let start = readme.find(begin).expect("the reference marks its parameter table") + begin.len();
    let stop = readme[start..].find(end).expect("the table's end mark") + start;
    let expected = params::readme_table();
    assert!(
        readme[start..stop] == expected,
        "docs/reference/parameters.md's table is stale; run `cargo run -- docs`:\n{expected}"
    );
}

#[test]
fn mcp_entries_are_read_and_bad_ones_skipped_with_a_warning() {
    let text = r#"
[[mcp]]
name = "files"
command = "npx"
args = ["-y", "server-filesystem", "/tmp"]
env = { ROOT = "/tmp" }
tools = ["read_text_file"]
timeout_secs = 5

[[mcp]]
name = "files"
command = "other"

[[mcp]]
command = "nameless"

[[mcp]]
name = "typo"
comand = "x"
"#;
    let (config, warnings) = Config::parse(text, "config.toml");
    assert_eq!(config.mcp.len(), 1, "{:?}", config.mcp);
    let files = &config.mcp[0];
    assert_eq!((files.name.as_str(), files.command.as_str(), files.args.len()), ("files", "npx", 3));
    assert_eq!((files.tools.as_deref(), files.timeout_secs), (Some(&["read_text_file".to_string()][..]), Some(5)));
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(
        warnings.iter().any(|w| w.contains("mcp entry 2") && w.contains("a second server named files")),
        "{warnings:?}"
    );
    assert!(warnings.iter().any(|w| w.contains("mcp entry 4") && w.contains("comand")), "{warnings:?}");
}
