//! A synchronous driver for runs whose replies need no waiting (importers, demo
//! recording, tests): calls are answered in request order as they are made, and
//! every input goes through [`Run::feed`] like a live run's. Tool calls are answered
//! by the caller's `tool` function ([`drive_with_tools`]) or, in [`drive`], with an
//! observation saying there are no tools.

use std::collections::VecDeque;

use super::Run;
use crate::engine::{CheckReply, CheckRequest, Effect, Event, Input, LlmReply, NodeId, ToolReply};
use crate::protocol::{CallError, LlmRequest, LlmResponse, ToolRequest, ToolResult};
use crate::session::SessionError;

/// An outstanding call: a model request or a tool call.
enum Call {
    Llm(LlmRequest),
    /// The action, the step it is for, and the step whose tool state it continues.
    Tool(ToolRequest, NodeId, NodeId),
    /// A task's check program (run here, as a live run's driver runs it).
    Check(CheckRequest),
}

struct Sync<'a> {
    run: &'a mut Run,
    /// Outstanding calls in request order.
    queue: VecDeque<(u64, Call)>,
    events: Vec<Event>,
}

impl Sync<'_> {
    fn apply(&mut self, input: Input, request: Option<&LlmRequest>) -> Result<(), SessionError> {
        let fed = self.run.feed(input, request);
        for e in fed.effects {
            match e {
                Effect::CallLlm { call, request } => self.queue.push_back((call, Call::Llm(request))),
                Effect::CallTool { call, tool, node, after } => {
                    self.queue.push_back((call, Call::Tool(tool, node, after)))
                }
                Effect::RunCheck { call, request } => self.queue.push_back((call, Call::Check(request))),
                Effect::Cancel { calls } => self.queue.retain(|(c, _)| !calls.contains(c)),
                Effect::Emit { .. } => {}
            }
        }
        self.events.extend(fed.events);
        match self.run.take_write_error() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn settle(
        &mut self,
        answer: &mut impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
        tool: &mut impl FnMut(&ToolRequest, NodeId, NodeId) -> ToolResult,
    ) -> Result<(), SessionError> {
        while let Some((call, pending)) = self.queue.pop_front() {
            match pending {
                Call::Llm(request) => {
                    let input = Input::LlmReply(LlmReply { call, result: answer(&request) });
                    self.apply(input, Some(&request))?;
                }
                Call::Tool(request, node, after) => {
                    let input = Input::ToolReply(ToolReply { call, result: tool(&request, node, after) });
                    self.apply(input, None)?;
                }
                Call::Check(request) => {
                    let input = Input::CheckReply(CheckReply { call, result: super::check_run::run(&request) });
                    self.apply(input, None)?;
                }
            }
        }
        Ok(())
    }
}

/// Feed `inputs` (then every reply they lead to) to `run`, answering calls with
/// `answer`. Returns every event. Calls left pending when the inputs run out are
/// answered too, so the run settles. A session that cannot be written is an error.
pub fn drive(
    run: &mut Run,
    inputs: Vec<Input>,
    answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
) -> Result<Vec<Event>, SessionError> {
    let no_tools = |_: &ToolRequest, _: NodeId, _: NodeId| ToolResult {
        text: "No tools are available in this run.".into(),
        ok: false,
        latency_ms: 0,
    };
    drive_with_tools(run, inputs, answer, no_tools)
}

/// [`drive`], with tool calls answered by `tool` (given the action, the step it is for
/// and the step whose tool state it continues: see [`tools_of`]).
pub fn drive_with_tools(
    run: &mut Run,
    inputs: Vec<Input>,
    mut answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
    mut tool: impl FnMut(&ToolRequest, NodeId, NodeId) -> ToolResult,
) -> Result<Vec<Event>, SessionError> {
    let mut sync = Sync { run, queue: VecDeque::new(), events: Vec::new() };
    for input in inputs {
        // Answer what the previous input asked before the next command, as a person would wait.
        sync.settle(&mut answer, &mut tool)?;
        sync.apply(input, None)?;
    }
    sync.settle(&mut answer, &mut tool)?;
    Ok(sync.events)
}

/// A `tool` for [`drive_with_tools`] that runs the actions through `runner`, each from
/// the tool state of the step it continues (as a live run does), with the latency left
/// out (0) so that recordings are reproducible.
pub fn tools_of(runner: &mut super::tools::ToolRunner) -> impl FnMut(&ToolRequest, NodeId, NodeId) -> ToolResult + '_ {
    |request, node, after| ToolResult { latency_ms: 0, ..futures::executor::block_on(runner.run(request, node, after)) }
}
