//! The arena search tree: every thought the search (or a person) produced, with its
//! scores, status and origin. Nodes are never removed, only marked, so a session
//! replays to the same ids and a pruned branch stays visible.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::step::Step;
use crate::protocol::Text;

/// Index of a node in the arena. The root is always `NodeId(0)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NodeId(pub usize);

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// Where a node's thought came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// The puzzle input itself.
    Root,
    /// Proposed or sampled by the model.
    Model,
    /// Written or edited by a person (the id of the node that was edited, if any).
    Human { edited_from: Option<NodeId> },
}

/// What the search has done with a node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum NodeStatus {
    /// Generated, waiting for (or without) evaluation.
    Candidate,
    /// Kept by selection; waiting to be expanded.
    Frontier,
    /// Children were generated from it.
    Expanded,
    /// Cut by the beam, a threshold or a backtrack.
    Dropped(DropReason),
    /// Pruned by a person.
    Pruned,
    /// The task rejected the thought (malformed, wrong arithmetic, ...).
    Invalid(String),
    /// A final state the method outputs (answer not yet known to be right).
    Final,
    /// A final state whose answer the task's checker accepts.
    Solution,
}

/// Why a method dropped a node. Recorded as its sentence (sessions hold the text), and
/// read back into the variant, so replays compare typed reasons.
#[derive(Debug, Clone, PartialEq)]
pub enum DropReason {
    /// Not among the `beam` best candidates of BFS step `step`.
    BelowBeam { beam: usize, step: usize },
    /// Valued below the DFS threshold.
    BelowThreshold { value: f64, threshold: f64 },
    /// No child of it is worth trying (DFS popped it).
    NoChildLeft,
    /// A person forced a backtrack over it.
    Backtracked,
    /// A person continued the search from another node.
    ContinuedFrom(NodeId),
    /// Nothing below it can be tried any more (MCTS).
    Exhausted,
    /// A reason of another kind, kept as written.
    Other(String),
}

// Values are finite (never NaN), so equality is total.
impl Eq for DropReason {}

impl std::fmt::Display for DropReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DropReason::BelowBeam { beam, step } => write!(f, "below the beam of {beam} at step {step}"),
            DropReason::BelowThreshold { value, threshold } => {
                write!(f, "value {value} is below the threshold {threshold}")
            }
            DropReason::NoChildLeft => f.write_str("no child above the threshold left"),
            DropReason::Backtracked => f.write_str("backtracked by hand"),
            DropReason::ContinuedFrom(node) => write!(f, "the search continued from {node}"),
            DropReason::Exhausted => f.write_str("nothing left to try below it"),
            DropReason::Other(text) => f.write_str(text),
        }
    }
}

impl DropReason {
    /// The reason a sentence states (the inverse of `Display`); unknown text is `Other`.
    pub fn parse(text: &str) -> DropReason {
        let known = [DropReason::NoChildLeft, DropReason::Backtracked, DropReason::Exhausted];
        if let Some(k) = known.into_iter().find(|k| k.to_string() == text) {
            return k;
        }
        let parsed = if let Some(rest) = text.strip_prefix("below the beam of ") {
            rest.split_once(" at step ")
                .and_then(|(b, s)| Some(DropReason::BelowBeam { beam: b.parse().ok()?, step: s.parse().ok()? }))
        } else if let Some(rest) = text.strip_prefix("value ") {
            rest.split_once(" is below the threshold ").and_then(|(v, t)| {
                let (value, threshold) = (v.parse::<f64>().ok()?, t.parse::<f64>().ok()?);
                (value.is_finite() && threshold.is_finite()).then_some(DropReason::BelowThreshold { value, threshold })
            })
        } else if let Some(rest) = text.strip_prefix("the search continued from #") {
            rest.parse().ok().map(|n| DropReason::ContinuedFrom(NodeId(n)))
        } else {
            None
        };
        // Only a reading that writes back the same text is taken.
        parsed.filter(|r| r.to_string() == text).unwrap_or_else(|| DropReason::Other(text.to_string()))
    }
}

impl Serialize for DropReason {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DropReason {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(DropReason::parse(&String::deserialize(deserializer)?))
    }
}

impl NodeStatus {
    pub fn label(&self) -> &'static str {
        match self {
            NodeStatus::Candidate => "candidate",
            NodeStatus::Frontier => "frontier",
            NodeStatus::Expanded => "expanded",
            NodeStatus::Dropped(_) => "dropped",
            NodeStatus::Pruned => "pruned",
            NodeStatus::Invalid(_) => "invalid",
            NodeStatus::Final => "final",
            NodeStatus::Solution => "solution",
        }
    }
}

/// The evaluator's verdict on a node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Score {
    /// The value used for ranking (sum of mapped classes, or vote count).
    pub value: f64,
    /// The class or vote read from each sample, e.g. `["sure", "likely", "sure"]`.
    pub samples: Vec<String>,
    /// Why the value was fixed without asking (duplicate in step, last step without an answer, ...).
    pub note: Option<String>,
}

/// A problem found with a node (kept even when the node is used). Shown as its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Issue {
    /// The task's objection to a proposed thought.
    Proposal(String),
    /// A model call made for the node failed.
    CallFailed { call: u64, message: String },
    /// ReAct: the reply had no usable action; the reason is what the agent was told.
    BadCall(String),
    /// ReAct: the model call for the action after a person's thought failed.
    ActionFailed(String),
    /// ReAct (chat prompts): the first reply could not be read, for this reason, and the
    /// model was asked once more with a reminder of the format; the step is the retry's.
    Retried(String),
    /// ReAct: something about the reply worth knowing that did not make the call bad
    /// (actions not taken, a text action in native mode, ...).
    Note(String),
}

impl Issue {
    pub fn is_bad_call(&self) -> bool {
        matches!(self, Issue::BadCall(_))
    }

    pub fn is_retry(&self) -> bool {
        matches!(self, Issue::Retried(_))
    }
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Issue::Proposal(text) | Issue::Note(text) => f.write_str(text),
            Issue::CallFailed { call, message } => write!(f, "call {call} failed: {message}"),
            Issue::BadCall(problem) => write!(f, "bad call: {problem}"),
            Issue::ActionFailed(message) => write!(f, "the model call for the action failed: {message}"),
            Issue::Retried(problem) => write!(f, "asked again with a format reminder: {problem}"),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Node {
    pub id: NodeId,
    pub parent: Option<NodeId>,
    pub children: Vec<NodeId>,
    pub depth: usize,
    /// The new thought this node adds (one line for Game of 24).
    pub thought: Text,
    /// The whole partial output from the root to here (the reference's `y`).
    pub path: Text,
    pub status: NodeStatus,
    /// Boxed: most nodes of a large search are never valued, and a node is cloned whole
    /// when it changes under a replay checkpoint.
    pub score: Option<Box<Score>>,
    pub origin: Origin,
    /// Problems found with the thought (kept even when the thought is used).
    pub issues: Vec<Issue>,
    /// Bumped when the node's subtree is pruned, edited around or backtracked over;
    /// replies to calls made under an older generation are dropped.
    pub generation: u64,
    /// Calls made for this node (to generate its children, or to evaluate it).
    pub calls: Vec<u64>,
    /// The final answer this node states, if it is a final state.
    pub answer: Option<String>,
    /// The model call whose reply produced this node, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub made_by: Option<u64>,
    /// ReAct: how long the tool behind this step's action took to answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_ms: Option<u64>,
    /// The method's own numbers for the node (MCTS: N and Q; ...), shown by the panes
    /// without knowing the method, in key order.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metrics: std::collections::BTreeMap<String, f64>,
    /// ReAct: the step this node is, typed; its text is `thought` (derived state, rebuilt
    /// from the replies on replay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<Box<Step>>,
    /// Texts a method attaches to the node (Self-Refine's feedback on an attempt,
    /// Reflexion's reflection on a trial), shown under the thought in the detail pane
    /// and edited with it (derived state, rebuilt from the replies on replay).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    /// The tree's one-line label for the node when the method gives one (e.g.
    /// `attempt 2 · answer 6 * 4 · ✗ incorrect`); otherwise the thought's first line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A text a method attaches to a node, under a short label (`feedback`, `reflection`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub label: String,
    pub text: String,
}

/// The line that opens a note in the text a person edits: `── feedback ──`.
fn note_heading(label: &str) -> String {
    format!("── {label} ──")
}

impl Node {
    /// What a person edits for this node: the thought, then each note under its
    /// heading line (`── feedback ──`), so a note is edited like the thought.
    pub fn edit_text(&self) -> String {
        let mut text = self.thought.to_string();
        for note in &self.notes {
            text.push_str(&format!("\n{}\n{}", note_heading(&note.label), note.text));
        }
        text
    }

    /// Record a problem with the node. The list grows one at a time: most nodes that
    /// have issues have one, and a large search has tens of thousands of them.
    pub fn add_issue(&mut self, issue: Issue) {
        self.issues.reserve_exact(1);
        self.issues.push(issue);
    }

    /// The note with this label, if the node has one.
    pub fn note(&self, label: &str) -> Option<&str> {
        self.notes.iter().find(|n| n.label == label).map(|n| n.text.as_str())
    }
}

/// Split an edited text (see [`Node::edit_text`]) into the thought and the notes by
/// their heading lines; each part is trimmed. Text with no heading is all thought.
pub fn split_notes(text: &str) -> (String, Vec<Note>) {
    let mut thought = Vec::new();
    let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        let heading = t.strip_prefix("── ").and_then(|r| r.strip_suffix(" ──")).map(str::trim);
        match heading {
            Some(label) if !label.is_empty() => notes.push((label.to_string(), Vec::new())),
            _ => match notes.last_mut() {
                Some((_, lines)) => lines.push(line),
                None => thought.push(line),
            },
        }
    }
    let notes =
        notes.into_iter().map(|(label, lines)| Note { label, text: lines.join("\n").trim().to_string() }).collect();
    (thought.join("\n").trim().to_string(), notes)
}

/// How many of a parent's latest children a new child's text is compared with.
const SHARE_WINDOW: usize = 64;

/// Nodes are shared (copy-on-write) in shared chunks of [`CHUNK`], so cloning a tree for
/// a replay checkpoint costs a pointer per chunk, a change copies the node and its
/// chunk's pointers only, and a clone shares everything else.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SearchTree {
    #[serde(with = "shared_nodes")]
    nodes: Nodes,
}

/// Nodes a chunk of [`Nodes`] holds.
const CHUNK: usize = 64;

/// An append-only list of shared nodes, in shared chunks: all full but the last.
#[derive(Debug, Clone, Default)]
struct Nodes {
    chunks: Vec<Arc<Vec<Arc<Node>>>>,
    len: usize,
}

impl Nodes {
    fn len(&self) -> usize {
        self.len
    }

    fn get(&self, i: usize) -> Option<&Arc<Node>> {
        self.chunks.get(i / CHUNK).and_then(|c| c.get(i % CHUNK))
    }

    /// The node to change, copied first if a clone of the tree shares it (and its chunk
    /// copied first if a clone shares that).
    fn make_mut(&mut self, i: usize) -> &mut Node {
        assert!(i < self.len, "node #{i} of {}", self.len);
        Arc::make_mut(&mut Arc::make_mut(&mut self.chunks[i / CHUNK])[i % CHUNK])
    }

    fn push(&mut self, node: Arc<Node>) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(node),
            _ => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(node);
                self.chunks.push(Arc::new(chunk));
            }
        }
        self.len += 1;
    }

    fn iter(&self) -> impl Iterator<Item = &Arc<Node>> {
        self.chunks.iter().flat_map(|c| c.iter())
    }
}

impl std::ops::Index<usize> for Nodes {
    type Output = Node;
    /// Ids handed out by the engine are always valid; this panics only on a bug.
    fn index(&self, i: usize) -> &Node {
        match self.get(i) {
            Some(n) => n,
            None => panic!("node #{i} of {}", self.len),
        }
    }
}

/// Serialised as a plain list of nodes.
mod shared_nodes {
    use std::sync::Arc;

    use serde::{Deserialize, Deserializer, Serializer};

    use super::{Node, Nodes};

    pub fn serialize<S: Serializer>(nodes: &Nodes, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(nodes.iter().map(|n| &**n))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Nodes, D::Error> {
        let mut nodes = Nodes::default();
        for n in Vec::<Node>::deserialize(d)? {
            nodes.push(Arc::new(n));
        }
        Ok(nodes)
    }
}

impl SearchTree {
    pub fn new(root_thought: &str) -> Self {
        let root = Node {
            id: NodeId(0),
            parent: None,
            children: Vec::new(),
            depth: 0,
            thought: Text::from(root_thought),
            path: Text::default(),
            status: NodeStatus::Frontier,
            score: None,
            origin: Origin::Root,
            issues: Vec::new(),
            generation: 0,
            calls: Vec::new(),
            answer: None,
            made_by: None,
            tool_ms: None,
            metrics: Default::default(),
            step: None,
            notes: Vec::new(),
            label: None,
        };
        let mut nodes = Nodes::default();
        nodes.push(Arc::new(root));
        SearchTree { nodes }
    }

    pub fn root(&self) -> NodeId {
        NodeId(0)
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 0
    }

    pub fn get(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.0).map(|n| &**n)
    }

    /// Ids handed out by the engine are always valid; this panics only on a bug.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.0]
    }

    pub fn node_mut(&mut self, id: NodeId) -> &mut Node {
        self.nodes.make_mut(id.0)
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter().map(|n| &**n)
    }

    pub fn contains(&self, id: NodeId) -> bool {
        id.0 < self.nodes.len()
    }

    pub fn add_child(&mut self, parent: NodeId, thought: String, path: String, origin: Origin) -> NodeId {
        let (thought, path) = self.shared_with_siblings(parent, thought, path);
        let id = NodeId(self.nodes.len());
        let depth = self.nodes[parent.0].depth + 1;
        let generation = self.nodes[parent.0].generation;
        self.nodes.push(Arc::new(Node {
            id,
            parent: Some(parent),
            children: Vec::new(),
            depth,
            thought,
            path,
            status: NodeStatus::Candidate,
            score: None,
            origin,
            issues: Vec::new(),
            generation,
            calls: Vec::new(),
            answer: None,
            made_by: None,
            tool_ms: None,
            metrics: Default::default(),
            step: None,
            notes: Vec::new(),
            label: None,
        }));
        self.node_mut(parent).children.push(id);
        id
    }

    /// The thought and path of a new child of `parent`, stored once with a recent
    /// sibling's when they are the same text (sampled generation repeats itself: 50
    /// samples of one state hold a few distinct thoughts). Only the last
    /// [`SHARE_WINDOW`] siblings are looked at, so adding stays constant time.
    fn shared_with_siblings(&self, parent: NodeId, thought: String, path: String) -> (Text, Text) {
        let siblings = &self.nodes[parent.0].children;
        let recent = &siblings[siblings.len().saturating_sub(SHARE_WINDOW)..];
        let mut shared_thought = None;
        for &s in recent.iter().rev() {
            let sibling = &self.nodes[s.0];
            if *sibling.thought == *thought {
                if *sibling.path == *path {
                    return (sibling.thought.clone(), sibling.path.clone());
                }
                shared_thought.get_or_insert_with(|| sibling.thought.clone());
            }
        }
        (shared_thought.unwrap_or_else(|| Text::from(thought)), Text::from(path))
    }

    /// The strict ancestors of `id`, nearest first (its parent, ..., the root).
    pub fn ancestors(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut at = self.get(id).and_then(|n| n.parent);
        while let Some(p) = at {
            out.push(p);
            at = self.nodes[p.0].parent;
        }
        out
    }

    /// The node and all its descendants, in pre-order.
    pub fn subtree(&self, id: NodeId) -> Vec<NodeId> {
        let mut out = Vec::new();
        let mut stack = vec![id];
        while let Some(n) = stack.pop() {
            out.push(n);
            for &c in self.nodes[n.0].children.iter().rev() {
                stack.push(c);
            }
        }
        out
    }

    /// True if `id` is `ancestor` or lies below it.
    pub fn is_within(&self, id: NodeId, ancestor: NodeId) -> bool {
        let mut cur = Some(id);
        while let Some(n) = cur {
            if n == ancestor {
                return true;
            }
            cur = self.nodes[n.0].parent;
        }
        false
    }

    /// True if the node or one of its ancestors was pruned by hand.
    pub fn is_pruned(&self, id: NodeId) -> bool {
        let mut cur = Some(id);
        while let Some(n) = cur {
            if self.nodes[n.0].status == NodeStatus::Pruned {
                return true;
            }
            cur = self.nodes[n.0].parent;
        }
        false
    }

    pub fn value(&self, id: NodeId) -> Option<f64> {
        self.nodes[id.0].score.as_ref().map(|s| s.value)
    }

    /// Bump the generation of a whole subtree so late replies for it are dropped.
    pub fn bump_generation(&mut self, id: NodeId) {
        for n in self.subtree(id) {
            self.node_mut(n).generation += 1;
        }
    }
}

impl SearchTree {
    /// The tree as indented text, one node a line: status, value, thought, and the
    /// reason a node was dropped or rejected.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let mut stack = vec![(self.root(), 0usize)];
        while let Some((id, indent)) = stack.pop() {
            let n = self.node(id);
            let value = n.score.as_ref().map(|s| format!(" [{}]", format_value(s.value))).unwrap_or_default();
            let edited = if matches!(n.origin, Origin::Human { .. }) { " (edited by hand)" } else { "" };
            let reason = match &n.status {
                NodeStatus::Dropped(r) => format!(" — {r}"),
                NodeStatus::Invalid(r) => format!(" — {r}"),
                _ => String::new(),
            };
            let thought = n.thought.lines().next().unwrap_or("");
            out.push_str(&format!(
                "{}{} {}{}{} {}{}\n",
                "  ".repeat(indent),
                id,
                n.status.label(),
                value,
                edited,
                thought,
                reason
            ));
            for &c in n.children.iter().rev() {
                stack.push((c, indent + 1));
            }
        }
        out
    }
}

/// Values as the reference prints them: 60, 3, 1.002.
pub fn format_value(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clone_shares_the_nodes_in_chunks_and_a_change_copies_one_node_and_its_chunk() {
        let mut t = SearchTree::new("4 5 6 10");
        for i in 0..200 {
            t.add_child(t.root(), format!("line {i}"), format!("line {i}\n"), Origin::Model);
        }
        assert_eq!((t.len(), t.nodes.chunks.len()), (201, 201usize.div_ceil(CHUNK)));
        let ids: Vec<usize> = t.nodes().map(|n| n.id.0).collect();
        assert_eq!(ids, (0..201).collect::<Vec<_>>(), "in id order across chunks");
        let checkpoint = t.clone();
        let shared = |a: &SearchTree, b: &SearchTree| {
            a.nodes.chunks.iter().zip(&b.nodes.chunks).filter(|(x, y)| Arc::ptr_eq(x, y)).count()
        };
        assert_eq!(shared(&t, &checkpoint), t.nodes.chunks.len(), "a clone copies no chunk");
        t.node_mut(NodeId(70)).status = NodeStatus::Expanded;
        assert_eq!(shared(&t, &checkpoint), t.nodes.chunks.len() - 1, "one chunk copied");
        assert_eq!(checkpoint.node(NodeId(70)).status, NodeStatus::Candidate, "the clone is untouched");
        assert!(Arc::ptr_eq(t.nodes.get(71).unwrap(), checkpoint.nodes.get(71).unwrap()), "its other nodes shared");
        // Adding to a shared last chunk copies it; the clone keeps its length.
        t.add_child(t.root(), "more".into(), "more\n".into(), Origin::Model);
        assert_eq!((t.len(), checkpoint.len()), (202, 201));
        assert!(checkpoint.get(NodeId(201)).is_none() && t.get(NodeId(201)).is_some());
        // Serialised as the plain list it always was, and read back the same.
        let json = serde_json::to_value(&t).unwrap();
        assert_eq!(json["nodes"].as_array().map(Vec::len), Some(202));
        let back: SearchTree = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), json);
    }

    #[test]
    fn siblings_with_the_same_thought_store_it_once() {
        let mut t = SearchTree::new("4 5 6 10");
        let root = t.root();
        let line = "4 + 5 = 9 (left: 6 9 10)";
        let a = t.add_child(root, line.into(), format!("{line}\n"), Origin::Model);
        let b = t.add_child(root, line.into(), format!("{line}\n"), Origin::Model);
        let c = t.add_child(
            root,
            "5 + 6 = 11 (left: 4 10 11)".into(),
            "5 + 6 = 11 (left: 4 10 11)\n".into(),
            Origin::Model,
        );
        // The same thought under another path (a person's edit, a method's own path).
        let d = t.add_child(root, line.into(), "edited\n".into(), Origin::Model);
        let (na, nb, nc, nd) = (t.node(a), t.node(b), t.node(c), t.node(d));
        assert!(na.thought.shares(&nb.thought) && na.path.shares(&nb.path), "repeated sample stored once");
        assert!(!na.thought.shares(&nc.thought), "another thought is its own");
        assert!(nd.thought.shares(&na.thought) && !nd.path.shares(&na.path));
        assert_eq!((&*nd.path, &*nb.path), ("edited\n", "4 + 5 = 9 (left: 6 9 10)\n"));
        // Cousins do not share (only siblings are looked at), and text stays equal either way.
        let e = t.add_child(c, line.into(), format!("{line}\n"), Origin::Model);
        assert!(!t.node(e).thought.shares(&t.node(a).thought));
        assert_eq!(t.node(e).thought, t.node(a).thought);
        // A changed node copies no text.
        let before = t.node(a).thought.clone();
        t.node_mut(a).status = NodeStatus::Expanded;
        assert!(t.node(a).thought.shares(&before));
    }

    #[test]
    fn subtree_and_ancestry() {
        let mut t = SearchTree::new("4 5 6 10");
        let a = t.add_child(t.root(), "a".into(), "a\n".into(), Origin::Model);
        let b = t.add_child(t.root(), "b".into(), "b\n".into(), Origin::Model);
        let a1 = t.add_child(a, "a1".into(), "a\na1\n".into(), Origin::Model);
        assert_eq!(t.subtree(t.root()), vec![NodeId(0), a, a1, b]);
        assert!(t.is_within(a1, a));
        assert!(!t.is_within(a1, b));
        assert_eq!(t.node(a1).depth, 2);
        t.node_mut(a).status = NodeStatus::Pruned;
        assert!(t.is_pruned(a1));
        assert!(!t.is_pruned(b));
        t.bump_generation(a);
        assert_eq!(t.node(a1).generation, 1);
        assert_eq!(t.node(b).generation, 0);
    }
}

#[cfg(test)]
mod drop_reason_tests {
    use super::*;

    /// Each reason is written as the sentence sessions have always held, and read back
    /// into the same variant; other text stays as written.
    #[test]
    fn drop_reasons_round_trip_through_their_sentences() {
        let reasons = [
            DropReason::BelowBeam { beam: 5, step: 2 },
            DropReason::BelowThreshold { value: 2.001, threshold: 3.0 },
            DropReason::NoChildLeft,
            DropReason::Backtracked,
            DropReason::ContinuedFrom(NodeId(17)),
            DropReason::Exhausted,
        ];
        for r in reasons {
            let status = NodeStatus::Dropped(r.clone());
            let json = serde_json::to_string(&status).unwrap();
            assert_eq!(serde_json::from_str::<NodeStatus>(&json).unwrap(), status, "{json}");
            assert_eq!(DropReason::parse(&r.to_string()), r);
        }
        let old = r#"{"status":"dropped","reason":"below the beam of 5 at step 1"}"#;
        assert_eq!(
            serde_json::from_str::<NodeStatus>(old).unwrap(),
            NodeStatus::Dropped(DropReason::BelowBeam { beam: 5, step: 1 })
        );
        for odd in ["below the beam of five at step 1", "value 3 is below the threshold 03", "anything else"] {
            assert_eq!(DropReason::parse(odd), DropReason::Other(odd.into()));
            assert_eq!(DropReason::parse(odd).to_string(), odd);
        }
    }
}
