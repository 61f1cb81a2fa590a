//! ReTreVal's attempts: the complexity reading, the approaches and their lessons from
//! the memory, each attempt's tool-using solve steps, and refinement after critique.

use super::*;
use crate::engine::methods::react;

impl Retreval {
    pub(super) fn memory_on(&self, core: &Core) -> bool {
        !self.params.no_memory && core.memory.is_some()
    }

    pub(super) fn shape_text(c: Complexity, s: Shape) -> String {
        format!("complexity {c} → depth {} × branching {}", s.depth, s.branching)
    }

    /// Take a complexity: the shape, the node's label, the root's note, the log.
    pub(super) fn set_complexity(&mut self, core: &mut Core, c: Complexity, why: &str) {
        let shape = self.params.table.shape(c);
        self.complexity = Some(c);
        self.shape = Some(shape);
        let text = Self::shape_text(c, shape);
        let node = match self.complexity_node {
            Some(n) => n,
            None => {
                let root = core.tree.root();
                let n = core.add_node(root, text.clone(), String::new(), Origin::Model);
                core.set_status(n, NodeStatus::Expanded);
                self.complexity_node = Some(n);
                n
            }
        };
        core.tree.node_mut(node).thought = text.as_str().into();
        core.set_label(node, text.clone());
        let root = core.tree.root();
        core.set_note(root, COMPLEXITY_NOTE, &format!("{text} ({} table)", self.params.table.name()));
        core.log(format!("{why}{text} ({} table)", self.params.table.name()));
    }

    /// The approach hints for `b` root-level attempts: by the memory's reliability, best
    /// first (never seen counts as the initial reliability; ties keep the list's order).
    pub(super) fn approach_hints(&self, core: &Core, b: usize) -> Vec<Approach> {
        let mut ranked: Vec<Approach> = Approach::ALL.into_iter().filter(|a| *a != Approach::Other).collect();
        if self.memory_on(core) {
            if let Some(m) = core.memory.as_ref() {
                let initial = m.params().reliability_initial;
                let r = |a: &Approach| m.reliability(a.name()).unwrap_or(initial);
                ranked.sort_by(|a, b| r(b).total_cmp(&r(a)));
            }
        }
        (0..b).map(|i| ranked[i % ranked.len()]).collect()
    }

    /// The memory's lessons for a solve of `x` with `approach` (recording their use).
    pub(super) fn lessons(&mut self, core: &Core, x: &str, approach: Approach) -> Vec<String> {
        if !self.memory_on(core) {
            return Vec::new();
        }
        let Some(m) = core.memory.as_ref() else { return Vec::new() };
        let found: Vec<(EntryId, String)> =
            m.retrieve_for(x, approach.name(), LESSONS).into_iter().map(|(_, e)| (e.id, e.content.clone())).collect();
        self.used.extend(found.iter().map(|(id, _)| *id));
        found.into_iter().map(|(_, c)| c).collect()
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn new_attempt(
        &mut self,
        core: &mut Core,
        kind: Kind,
        approach: Approach,
        anchor: NodeId,
        branch: Option<usize>,
        level: usize,
        x: String,
        nonce: u32,
        history: Vec<String>,
    ) -> usize {
        let lessons = self.lessons(core, &x, approach);
        let index = self.attempts.len();
        let head = match kind {
            Kind::Edited | Kind::Composed => None,
            _ => {
                let what = match kind {
                    Kind::Root => format!("attempt {} · {approach}", nonce + 1),
                    Kind::Subtask(k) => format!("solve of subtask {}", k + 1),
                    _ => format!("refinement {} · {approach}", nonce + 1),
                };
                let id = core.add_node(anchor, what.clone(), String::new(), Origin::Model);
                core.set_status(id, NodeStatus::Expanded);
                core.set_label(id, what);
                if !history.is_empty() {
                    core.set_note(id, HISTORY_NOTE, &history.join("\n"));
                }
                Some(id)
            }
        };
        self.attempts.push(Attempt {
            kind,
            approach,
            anchor,
            head,
            branch: branch.unwrap_or(index),
            level,
            x,
            nonce,
            history,
            critique_in: None,
            attempt_in: None,
            lessons,
            nodes: Vec::new(),
            steps: 0,
            last_action: None,
            acting: None,
            state: SolveState::Ready,
            answer: None,
            local: None,
            cross: None,
            critique: String::new(),
            score: None,
            explored: false,
            validated: None,
        });
        index
    }

    pub(super) fn usable(&self, core: &Core, a: usize) -> bool {
        let at = &self.attempts[a];
        at.state == SolveState::Done && at.last().is_some_and(|n| core.usable(n) && !core.tree.is_pruned(n))
    }

    /// The attempt whose chain holds `node`.
    pub(super) fn attempt_of(&self, node: NodeId) -> Option<usize> {
        self.attempts.iter().position(|a| a.nodes.contains(&node))
    }

    /// The attempt whose last node is `node`.
    pub(super) fn attempt_at(&self, node: NodeId) -> Option<usize> {
        self.attempts.iter().position(|a| a.last() == Some(node) && a.state == SolveState::Done)
    }

    /// The best of `among` by total (scored and usable; the first of equals).
    pub(super) fn best_of(&self, core: &Core, among: impl IntoIterator<Item = usize>) -> Option<usize> {
        among.into_iter().filter(|&a| self.usable(core, a) && self.attempts[a].score.is_some()).fold(
            None,
            |best: Option<usize>, a| match best {
                Some(b) if self.attempts[a].total() <= self.attempts[b].total() => Some(b),
                _ => Some(a),
            },
        )
    }

    /// The attempts that answer the problem (not subtasks).
    pub(super) fn leaves(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.attempts.len()).filter(|&a| !matches!(self.attempts[a].kind, Kind::Subtask(_)))
    }

    // ---- solving ---------------------------------------------------------------------

    /// The guidance a solve's prompt starts with, and its context fields.
    pub(super) fn solve_prompt(&self, a: &Attempt, mut prompt: Prompt, step: Option<usize>) -> Prompt {
        let mut guide = format!("Approach: solve this with the {} approach.\n", a.approach);
        if !a.lessons.is_empty() {
            guide.push_str("Lessons from earlier problems:\n");
            for l in &a.lessons {
                guide.push_str(&format!("- {}\n", clip(l.trim(), 500)));
            }
        }
        if !a.history.is_empty() {
            guide.push_str("Critique history of this line of attack:\n");
            for h in &a.history {
                guide.push_str(&format!("- {}\n", clip(h.trim(), 1000)));
            }
        }
        if let (Some(prior), Some(critique)) = (&a.attempt_in, &a.critique_in) {
            guide.push_str(&format!(
                "An earlier attempt to improve on:\n{}\nCritique of it:\n{}\nWrite a better attempt.\n",
                clip(prior.trim(), MAX_TRACE_CHARS / 2),
                clip(critique.trim(), 2000)
            ));
        }
        if let Kind::Subtask(_) = a.kind {
            guide.push_str("Solve only the subtask below and finish with its result.\n");
        }
        // A chat layout (a system message, examples as turns) takes the guidance in its last
        // user turn, the problem's; a reference prompt is one user message.
        use crate::protocol::Role;
        let chat = prompt.messages.iter().any(|m| m.role != Role::User);
        let user = |m: &&mut crate::protocol::Message| m.role == Role::User;
        let target =
            if chat { prompt.messages.iter_mut().rev().find(user) } else { prompt.messages.iter_mut().find(user) };
        match target {
            Some(m) => m.content = format!("{guide}\n{}", m.content),
            None => prompt.messages.push(crate::protocol::Message::user(guide)),
        }
        if !prompt.context.is_object() {
            prompt.context = serde_json::json!({});
        }
        if let Some(c) = prompt.context.as_object_mut() {
            c.insert(CONTEXT_KEY.into(), "solve".into());
            c.insert("approach".into(), a.approach.name().into());
            c.insert("lessons".into(), a.lessons.clone().into());
            c.insert("history".into(), a.history.clone().into());
            if let (Some(prior), Some(critique)) = (&a.attempt_in, &a.critique_in) {
                c.insert("critique".into(), critique.clone().into());
                c.insert("attempt".into(), prior.clone().into());
            }
            if let Kind::Subtask(k) = a.kind {
                c.insert("subtask".into(), (k + 1).into());
            }
            if let Some(step) = step {
                c.insert("step".into(), step.into());
            }
        }
        prompt
    }

    /// Ask for attempt `a`'s next step (or its one chain-of-thought reply).
    pub(super) fn issue_step(&mut self, core: &mut Core, a: usize) -> bool {
        let at = self.attempts[a].clone();
        if self.params.no_tools {
            let prompt = self.solve_prompt(&at, core.task.cot_prompt(&at.x), None);
            let mut request = LlmRequest::from_prompt(prompt, 1, core.temperature);
            request.nonce = at.nonce;
            core.issue(at.tip(), CallKind::Own(TAG_SOLVE_COT), request, false);
            self.attempts[a].state = SolveState::Waiting;
            return true;
        }
        let step = at.steps + 1;
        let trajectory = core.tree.node(at.tip()).path.clone();
        let native = self.tool_mode == ToolMode::Native;
        let react = core.task.react();
        let prompt = match (native, react) {
            (true, Some(r)) => r.native().map(|n| (n.react_native_prompt(&at.x, &trajectory, step), n.tool_defs())),
            (false, Some(r)) => Some((r.react_prompt(&at.x, &trajectory, step), Vec::new())),
            (_, None) => None,
        };
        // The engine refuses ReTreVal with tools on a task without ReAct steps; this is the line if one gets here.
        let Some((prompt, tools)) = prompt else {
            let what = if native { "native tool-calling ReAct prompt and tools" } else { "ReAct prompt" };
            core.log(format!(
                "the task {} has no {what}: attempt {} ends (use --no-tools for one chain-of-thought call)",
                core.task.name(),
                a + 1
            ));
            self.end_solve(core, a);
            return false;
        };
        let mut prompt = self.solve_prompt(&at, prompt, Some(step));
        if !core.task.prompt_style().is_reference() {
            // The chat style's episode is a conversation: each step an assistant turn, each
            // observation the next user turn (the guidance stays with the question's turn);
            // in native tool mode each action a tool call and each observation its result.
            let examples = prompt.messages.len().saturating_sub(1);
            react::episode_in_turns(&mut prompt.messages, &trajectory);
            if !tools.is_empty() {
                let steps = react::steps_to(core, at.tip());
                react::native_turns(&mut prompt.messages, examples, &tools, &steps);
            }
        }
        let mut request = LlmRequest::from_prompt(prompt, 1, core.temperature);
        react::with_tools(&mut request, tools);
        request.nonce = at.nonce;
        core.issue(at.tip(), CallKind::Act, request, false);
        self.attempts[a].state = SolveState::Waiting;
        true
    }

    /// Add a step node for attempt `a`: a child of its tip, its path the attempt's trajectory.
    pub(super) fn add_step(&mut self, core: &mut Core, a: usize, step: Step) -> NodeId {
        let parent = self.attempts[a].tip();
        let before = core.tree.node(parent).path.clone();
        let thought = step.text();
        let path = format!("{before}{}", step.path_text());
        let id = core.add_node(parent, thought, path, Origin::Model);
        core.tree.node_mut(id).step = Some(Box::new(step));
        core.set_status(id, NodeStatus::Expanded);
        self.attempts[a].nodes.push(id);
        id
    }

    /// Rewrite step node `id` from its (changed) step.
    pub(super) fn rewrite_step(core: &mut Core, id: NodeId, step: Step) {
        let parent_path = core.tree.node(id).parent.map(|p| core.tree.node(p).path.clone()).unwrap_or_default();
        let n = core.tree.node_mut(id);
        n.thought = step.text().into();
        n.path = format!("{parent_path}{}", step.path_text()).into();
        n.step = Some(Box::new(step));
    }

    /// The solve of `a` is over: its answer, label and notes.
    pub(super) fn end_solve(&mut self, core: &mut Core, a: usize) {
        let at = &mut self.attempts[a];
        let Some(last) = at.last() else {
            at.state = SolveState::Abandoned;
            core.log(format!("attempt {} ({}) ended without a step", a + 1, at.approach));
            return;
        };
        at.state = SolveState::Done;
        // The method's own "(not run: ...)" observation (a loop stopped) is no answer.
        let path: String = core
            .tree
            .node(last)
            .path
            .lines()
            .filter(|l| !(l.trim_start().starts_with("Observation") && l.contains("(not run: ")))
            .map(|l| format!("{l}\n"))
            .collect();
        at.answer = core.task.extract_answer(&at.x, &path);
        core.tree.node_mut(last).answer = at.answer.clone();
        let label = self.label(a);
        core.set_label(last, label);
        let history = self.attempts[a].history.join("\n");
        if !history.is_empty() {
            core.set_note(last, HISTORY_NOTE, &history);
        }
    }

    pub(super) fn label(&self, a: usize) -> String {
        let at = &self.attempts[a];
        let answer = at.answer.as_deref().map_or("no answer".to_string(), |s| clip(s, 40));
        match at.kind {
            Kind::Subtask(k) => format!("subtask {} · {answer}", k + 1),
            Kind::Composed => format!("composed · {answer}"),
            _ => format!("{} · {answer}", at.approach),
        }
    }

    /// The trace an attempt is judged by.
    pub(super) fn trace(&self, core: &Core, a: usize) -> String {
        self.attempts[a].last().map(|n| core.tree.node(n).path.to_string()).unwrap_or_default()
    }

    /// Start `b` refinements of attempt `a` (children of its last node).
    pub(super) fn refine(&mut self, core: &mut Core, a: usize) {
        let Some(shape) = self.shape else { return };
        let Some(last) = self.attempts[a].last() else { return };
        let parent = self.attempts[a].clone();
        let mut history = parent.history.clone();
        if !parent.critique.trim().is_empty() {
            history.push(clip(parent.critique.trim(), 1000));
        }
        let trace = self.trace(core, a);
        let mut fresh = Vec::new();
        // Places after what already hangs from `last` (a person's edit, earlier refinements).
        let first = core.tree.node(last).children.len();
        for i in 0..usize::from(shape.branching) {
            let nonce = (first + i) as u32;
            let n = self.new_attempt(
                core,
                Kind::Refine,
                parent.approach,
                last,
                Some(parent.branch),
                parent.level + 1,
                parent.x.clone(),
                nonce,
                history.clone(),
            );
            self.attempts[n].critique_in = Some(parent.critique.clone());
            self.attempts[n].attempt_in = Some(trace.clone());
            fresh.push(n);
        }
        self.attempts[parent.branch].explored = true;
        self.branch = Some(parent.branch);
        core.log(format!(
            "refining {last} ({}, total {}) with {} at level {}",
            parent.approach,
            fmt_total(parent.total()),
            count(fresh.len(), "refinement", "refinements"),
            parent.level + 1
        ));
        self.active = fresh;
        self.phase = Phase::Solving;
    }

    // ---- scoring ---------------------------------------------------------------------

    /// The root-level attempts, one per approach the shape allows.
    pub(super) fn start_roots(&mut self, core: &mut Core) -> Progress {
        let b = self.shape.map_or(1, |s| usize::from(s.branching));
        let hints = self.approach_hints(core, b);
        let root = core.tree.root();
        self.active = hints
            .iter()
            .enumerate()
            .map(|(i, &h)| self.new_attempt(core, Kind::Root, h, root, None, 1, core.x.clone(), i as u32, Vec::new()))
            .collect();
        let names: Vec<&str> = hints.iter().map(|h| h.name()).collect();
        core.log(format!("{}: {}", count(b, "root-level attempt", "root-level attempts"), names.join(", ")));
        self.phase = Phase::Solving;
        Progress::Moved
    }

    /// One step of every attempt ready for one; the round ends when none is waiting.
    pub(super) fn solve_round(&mut self, core: &mut Core) -> Progress {
        let mut issued = 0;
        for a in self.active.clone() {
            if self.attempts[a].state != SolveState::Ready {
                continue;
            }
            if !self.params.no_tools && self.attempts[a].steps >= MAX_TOOL_STEPS {
                if let Some(last) = self.attempts[a].last() {
                    core.set_note(last, "stopped", &format!("no finish after {MAX_TOOL_STEPS} tool steps"));
                }
                core.log(format!(
                    "attempt {} ({}) stops after {MAX_TOOL_STEPS} tool steps",
                    a + 1,
                    self.attempts[a].approach
                ));
                self.end_solve(core, a);
                continue;
            }
            if self.issue_step(core, a) {
                issued += 1;
            }
        }
        if issued > 0 {
            return Progress::Issued(issued);
        }
        if self.active.iter().any(|&a| self.attempts[a].state == SolveState::Waiting) {
            return Progress::Stuck("waiting for replies".into());
        }
        self.phase = Phase::Scoring;
        Progress::Moved
    }
}
