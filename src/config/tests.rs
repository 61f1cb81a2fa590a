use super::*;
use crate::engine::methods::rounds::{FeedbackSource, FirstPrompt};
use crate::engine::methods::tot_dfs::{ChildOrder, PruneRule, RunTo};
use crate::engine::{Evaluator, Generator, MethodKind, Params, Selection, ToolMode};

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
    let search = ParamPatch {
        method: MethodKind::from_name("tot-dfs"),
        breadth: Some(5),
        n_generate: Some(1),
        n_evaluate: Some(3),
        generator: Some(Generator::Sample),
        evaluator: Some(Evaluator::Vote),
        select: Some(Selection::Greedy),
        threshold: Some(3.0),
        max_states: Some(100),
        samples: Some(10),
        tool_mode: Some(ToolMode::Native),
        max_steps: Some(5),
        majority_threshold: Some(0.6),
        temperature: Some(0.7),
        seed: Some(42),
        ..ParamPatch::default()
    };
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
    assert_eq!((d.breadth, d.method, d.n_evaluate), (None, None, None));
    assert_eq!(d.temperature, Some(0.5));
    assert_eq!(d.samples, Some(4));
    // Every registered method is named, in the registry's order.
    let methods: Vec<&str> = crate::engine::methods::REGISTRY.iter().map(|m| m.kind.label()).collect();
    let expected = [
        "config.toml: theme: expected a theme name, found integer 3; ignored".to_string(),
        "config.toml: defaults.breadth: expected a whole number of at least 1, found string \"five\"; using the default"
            .to_string(),
        format!(
            "config.toml: defaults.method: expected one of {}, found string \"tot-bs\"; using the default",
            methods.join(", ")
        ),
        "config.toml: defaults.n_evaluate: expected a whole number of at least 0, found integer -1; using the default"
            .to_string(),
        "config.toml: colours: unknown key (known: theme, defaults, keymap, providers, prices, break); ignored"
            .to_string(),
    ];
    for line in expected {
        assert!(warnings.iter().any(|w| *w == line), "missing {line:?} in {warnings:#?}");
    }
    assert!(warnings.iter().any(|w| w.starts_with("config.toml: defaults.colour: unknown key (known: task, ")));
    assert!(warnings.iter().any(|w| w.starts_with("config.toml: keymap entry 2: `on` must be a key string")));
    assert_eq!(warnings.len(), 7, "{warnings:#?}");
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
fn a_named_file_must_exist() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.toml");
    let (config, warnings) = Config::load(Some(&missing));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("nope.toml: cannot read"), "{}", warnings[0]);
    assert!(config.providers().unwrap_err().to_string().contains("nope.toml"));
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
    let file = ParamPatch {
        breadth: Some(2),
        n_evaluate: Some(1),
        generator: Some(Generator::Sample),
        lenient: Some(true),
        ..ParamPatch::default()
    };
    let flags = ParamPatch { breadth: Some(7), temperature: Some(0.2), ..ParamPatch::default() };
    let p = ParamPatch::merge(&flags, &file);
    let d = Params::default();
    assert_eq!(p.breadth, 7, "the flag wins over the file");
    assert_eq!((p.n_evaluate, p.generator, p.lenient), (1, Generator::Sample, true), "the file over the default");
    assert_eq!(p.temperature, 0.2);
    assert_eq!((p.max_states, p.select, p.method, p.samples), (d.max_states, d.select, d.method, d.samples));
    assert_eq!(ParamPatch::merge(&ParamPatch::default(), &ParamPatch::default()), d);
}

#[test]
fn every_field_reaches_params() {
    let mcts = MethodKind::from_name("mcts").unwrap();
    let all = ParamPatch {
        method: Some(mcts),
        uct_c: Some(2.5),
        iterations: Some(9),
        rollout_depth: Some(1),
        breadth: Some(3),
        n_generate: Some(4),
        n_evaluate: Some(5),
        generator: Some(Generator::Sample),
        evaluator: Some(Evaluator::Vote),
        select: Some(Selection::Sample),
        steps: Some(6),
        threshold: Some(1.5),
        max_states: Some(50),
        samples: Some(11),
        max_steps: Some(12),
        tool_mode: Some(ToolMode::Native),
        majority_threshold: Some(0.25),
        temperature: Some(0.7),
        lenient: Some(true),
        seed: Some(99),
        rounds: Some(8),
        trials: Some(5),
        feedback: Some(FeedbackSource::Oracle),
        first: Some(FirstPrompt::Io),
        complexity_table: Some("official".into()),
        local_weight: Some(0.5),
        cross_weight: Some(0.3),
        skeptic_weight: Some(0.2),
        decompose_threshold: Some(0.4),
        decompose_min_complexity: Some(4),
        max_subtasks: Some(3),
        no_memory: Some(true),
        no_backtrack: Some(true),
        no_tools: Some(true),
        no_cross: Some(true),
        no_decompose: Some(true),
        child_order: Some(ChildOrder::Proposal),
        prune: Some(PruneRule::Task),
        no_prune: Some(true),
        max_children: Some(3),
        run_to: Some(RunTo::Cap),
    };
    let p = all.params();
    assert_eq!(p.method, mcts);
    assert_eq!((p.breadth, p.n_generate, p.n_evaluate, p.steps), (3, 4, 5, Some(6)));
    assert_eq!((p.generator, p.evaluator, p.select), (Generator::Sample, Evaluator::Vote, Selection::Sample));
    assert_eq!((p.threshold, p.max_states, p.samples, p.max_steps), (1.5, 50, 11, 12));
    assert_eq!((p.tool_mode, p.majority_threshold, p.temperature), (ToolMode::Native, 0.25, 0.7));
    assert_eq!((p.lenient, p.seed), (true, 99));
    let extra: Vec<(&str, String)> = p.extra.iter().map(|(k, v)| (k.as_str(), v.to_string())).collect();
    assert_eq!(
        extra,
        [
            ("child_order", "\"proposal\"".into()),
            ("complexity_table", "\"official\"".into()),
            ("cross_weight", "0.3".into()),
            ("decompose_min_complexity", "4".into()),
            ("decompose_threshold", "0.4".into()),
            ("feedback", "\"oracle\"".into()),
            ("first", "\"io\"".into()),
            ("iterations", "9".into()),
            ("local_weight", "0.5".into()),
            ("max_children", "3".into()),
            ("max_subtasks", "3".into()),
            ("no_backtrack", "true".into()),
            ("no_cross", "true".into()),
            ("no_decompose", "true".into()),
            ("no_memory", "true".into()),
            ("no_prune", "true".into()),
            ("no_tools", "true".into()),
            ("prune", "\"task\"".into()),
            ("rollout_depth", "1".into()),
            ("rounds", "8".into()),
            ("run_to", "\"cap\"".into()),
            ("skeptic_weight", "0.2".into()),
            ("trials", "5".into()),
            ("uct_c", "2.5".into())
        ]
    );
    // The hybrids default to the ReAct paper's 21 samples.
    let hybrid = ParamPatch { method: MethodKind::from_name("cot-sc-react"), ..ParamPatch::default() };
    assert_eq!(hybrid.params().samples, 21);
}

#[test]
fn every_patch_key_is_read_from_the_file() {
    // The file accepts exactly the patch's keys plus the run's own.
    let text: String = ParamPatch::KEYS.iter().map(|k| format!("{k} = []\n")).collect();
    let (_, warnings) = Config::parse(&format!("[defaults]\n{text}"), "c.toml");
    assert_eq!(warnings.len(), ParamPatch::KEYS.len(), "{warnings:#?}");
    assert!(warnings.iter().all(|w| w.contains("using the default")), "{warnings:#?}");
}
