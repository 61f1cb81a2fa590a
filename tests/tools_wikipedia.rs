//! The `wikipedia` knowledge backend against a local fake MediaWiki API on 127.0.0.1 (never
//! the real Wikipedia): a page, a missing page with similar titles, a hanging server, bad
//! JSON, an error status and a closed port all end as observations, in bounded time.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use support::{FakeServer, Reply, Seen};
use thoughtscope::tools::wikipedia::{Wikipedia, WikipediaOptions, DEFAULT_API_URL};
use thoughtscope::tools::{Observation, ToolCall, ToolRegistry, ToolState};

fn wiki_registry(api_url: &str, timeout: Duration) -> (ToolRegistry, Arc<Wikipedia>) {
    let options = WikipediaOptions {
        api_url: api_url.to_string(),
        connect_timeout: Duration::from_secs(2),
        timeout,
        no_proxy: true,
        ..WikipediaOptions::default()
    };
    let wiki = Arc::new(Wikipedia::new(options).expect("the client builds"));
    (ToolRegistry::react(wiki.clone()), wiki)
}

async fn act(registry: &ToolRegistry, state: &mut ToolState, action: &str) -> Observation {
    registry.call(&ToolCall::parse(action).expect("a well-formed action"), state).await
}

fn is_query(seen: &Seen) -> bool {
    seen.path.contains("action=query")
}

const EXTRACT: &str = "Mount Example is a mountain. It is 3,000 m high. Dr. Ann Lee climbed it in 1901. \
It has two glaciers. Its snow never melts. Hikers visit in summer.\n\n== Geology ==\nIt is made of granite. \
The granite is grey.";

fn page_reply() -> Reply {
    let body = serde_json::json!({
        "batchcomplete": "",
        "query": {"pages": {"736": {"pageid": 736, "ns": 0, "title": "Mount Example", "extract": EXTRACT}}},
    });
    Reply::json(200, body.to_string())
}

#[tokio::test]
async fn a_page_shows_its_first_five_sentences_and_is_cached() {
    let server = FakeServer::start(|_, seen| if is_query(seen) { page_reply() } else { Reply::json(500, "{}") });
    let (registry, wiki) = wiki_registry(&format!("{}/w/api.php", server.url), Duration::from_secs(5));
    let mut state = ToolState::default();

    let obs = act(&registry, &mut state, "Search[Mount Example]").await;
    assert!(obs.ok, "{}", obs.text);
    assert_eq!(
        obs.text,
        "Mount Example is a mountain. It is 3,000 m high. Dr. Ann Lee climbed it in 1901. It has two glaciers. \
         Its snow never melts."
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.method, "GET");
    assert!(request.path.starts_with("/v1/w/api.php?"), "{}", request.path);
    for param in ["action=query", "prop=extracts", "explaintext=1", "redirects=1", "format=json", "titles=Mount"] {
        assert!(request.path.contains(param), "{param} missing from {}", request.path);
    }
    assert!(request.header("user-agent").is_some_and(|ua| ua.contains("thoughtscope")), "{:?}", request.headers);

    // Lookup works on the fetched page, section headings left out.
    assert_eq!(act(&registry, &mut state, "lookup[granite]").await.text, "(Result 1 / 2) It is made of granite.");
    assert_eq!(act(&registry, &mut state, "lookup[granite]").await.text, "(Result 2 / 2) The granite is grey.");
    assert_eq!(act(&registry, &mut state, "lookup[granite]").await.text, "No more results.");

    // The same search again is answered from memory.
    let again = act(&registry, &mut ToolState::default(), "search[Mount Example]").await;
    assert_eq!(again.text, obs.text);
    assert_eq!(server.requests(), 1);
    assert_eq!(wiki.cached(), 1);
}

#[tokio::test]
async fn a_missing_page_lists_similar_titles() {
    let server = FakeServer::start(|_, seen| {
        if is_query(seen) {
            let body = r#"{"query":{"pages":{"-1":{"ns":0,"title":"Mount Exampel","missing":""}}}}"#;
            Reply::json(200, body)
        } else if seen.path.contains("action=opensearch") {
            let body = serde_json::json!([
                "Mount Exampel",
                ["Mount Example", "Mount Example (band)", "Example Peak", "Exampel", "Mount Ex", "Sixth"],
                [],
                []
            ]);
            Reply::json(200, body.to_string())
        } else {
            Reply::json(400, "{}")
        }
    });
    let (registry, _) = wiki_registry(&server.url, Duration::from_secs(5));
    let mut state = ToolState::default();
    let obs = act(&registry, &mut state, "search[Mount Exampel]").await;
    assert!(obs.ok, "{}", obs.text);
    assert_eq!(
        obs.text,
        "Could not find Mount Exampel. Similar: ['Mount Example', 'Mount Example (band)', 'Example Peak', 'Exampel', 'Mount Ex']."
    );
    assert!(state.page.is_none());
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen[1].path.contains("search=Mount"), "{}", seen[1].path);
    assert!(!act(&registry, &mut state, "lookup[x]").await.ok, "no page was opened");
}

#[tokio::test]
async fn a_hanging_server_times_out_into_an_observation() {
    let server = FakeServer::start(|_, _| Reply::Hang);
    let (registry, wiki) = wiki_registry(&server.url, Duration::from_millis(400));
    let mut state = ToolState::default();
    let start = Instant::now();
    let obs = act(&registry, &mut state, "search[Anything]").await;
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    assert!(!obs.ok);
    assert_eq!(
        obs.text,
        "Search failed: wikipedia did not answer within 0.4 s. Try again or search for something else."
    );
    assert_eq!(wiki.cached(), 0, "failures are not cached");
}

#[tokio::test]
async fn malformed_json_is_an_observation() {
    let server = FakeServer::start(|i, _| match i {
        0 => Reply::json(200, "{\"query\": {\"pages\": "),
        1 => Reply::json(200, "[1, 2, 3]"),
        _ => Reply::json(200, r#"{"error": {"code": "badvalue", "info": "Unrecognized value for parameter"}}"#),
    });
    let (registry, _) = wiki_registry(&server.url, Duration::from_secs(5));
    let mut state = ToolState::default();
    for expect in ["could not be read", "no query.pages", "Unrecognized value"] {
        let obs = act(&registry, &mut state, "search[Anything]").await;
        assert!(!obs.ok);
        assert!(obs.text.starts_with("Search failed: wikipedia sent a reply that could not be read"), "{}", obs.text);
        assert!(obs.text.contains(expect), "{expect}: {}", obs.text);
    }
    assert_eq!(server.requests(), 3, "nothing was cached");
}

#[tokio::test]
async fn an_error_status_and_a_closed_port_are_observations() {
    let server = FakeServer::start(|_, _| Reply::json(503, "{}"));
    let (registry, _) = wiki_registry(&server.url, Duration::from_secs(5));
    let obs = act(&registry, &mut ToolState::default(), "search[Anything]").await;
    assert!(!obs.ok);
    assert!(obs.text.contains("HTTP status 503"), "{}", obs.text);

    // A port nobody listens on.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
        listener.local_addr().expect("its address").port()
    };
    let (registry, _) = wiki_registry(&format!("http://127.0.0.1:{port}/w/api.php"), Duration::from_secs(5));
    let start = Instant::now();
    let obs = act(&registry, &mut ToolState::default(), "search[Anything]").await;
    assert!(start.elapsed() < Duration::from_secs(5));
    assert!(!obs.ok);
    assert!(obs.text.starts_with("Search failed: could not reach wikipedia"), "{}", obs.text);
}

#[test]
fn the_default_options_name_wikipedia_and_thoughtscope() {
    let options = WikipediaOptions::default();
    assert_eq!(options.api_url, DEFAULT_API_URL);
    assert_eq!(DEFAULT_API_URL, "https://en.wikipedia.org/w/api.php");
    assert!(options.user_agent.starts_with("thoughtscope/"));
    assert!(options.timeout <= Duration::from_secs(30) && options.connect_timeout <= options.timeout);
    // Building the client contacts nothing.
    let wiki = Wikipedia::new(options).expect("the client builds");
    assert_eq!(wiki.cached(), 0);
}
