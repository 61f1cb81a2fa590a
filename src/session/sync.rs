//! A synchronous driver for runs whose replies need no waiting (importers, demo
//! recording, tests): calls are answered in request order as they are made, and
//! every input is recorded like a live run records it. Tool calls are answered by the
//! caller's `tool` function ([`drive_with_tools`]) or, in [`drive`], with an observation
//! saying there are no tools.

use std::collections::VecDeque;

use super::{SessionError, SessionWriter, Totals};
use crate::engine::{
    CallError, Effect, Engine, Event, Input, LlmReply, LlmRequest, LlmResponse, ToolReply, ToolRequest, ToolResult,
};

/// An outstanding call: a model request or a tool call.
enum Call {
    Llm(LlmRequest),
    Tool(ToolRequest),
}

struct Run<'a> {
    engine: &'a mut Engine,
    writer: Option<&'a mut SessionWriter>,
    /// Outstanding calls in request order.
    queue: VecDeque<(u64, Call)>,
    totals: Totals,
    events: Vec<Event>,
}

impl Run<'_> {
    fn apply(&mut self, input: Input, request: Option<&LlmRequest>) -> Result<(), SessionError> {
        self.totals.count(&input);
        let effects = self.engine.handle(input.clone());
        let mut events = Vec::new();
        for e in effects {
            match e {
                Effect::CallLlm { call, request } => self.queue.push_back((call, Call::Llm(request))),
                Effect::CallTool { call, tool, .. } => self.queue.push_back((call, Call::Tool(tool))),
                Effect::Cancel { calls } => self.queue.retain(|(c, _)| !calls.contains(c)),
                Effect::Emit { event } => events.push(event),
            }
        }
        if let Some(w) = self.writer.as_deref_mut() {
            w.input(&input, request, &events)?;
        }
        self.events.extend(events);
        Ok(())
    }

    fn settle(
        &mut self,
        answer: &mut impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
        tool: &mut impl FnMut(&ToolRequest) -> ToolResult,
    ) -> Result<(), SessionError> {
        while let Some((call, pending)) = self.queue.pop_front() {
            match pending {
                Call::Llm(request) => {
                    let input = Input::LlmReply(LlmReply { call, result: answer(&request) });
                    self.apply(input, Some(&request))?;
                }
                Call::Tool(request) => {
                    let input = Input::ToolReply(ToolReply { call, result: tool(&request) });
                    self.apply(input, None)?;
                }
            }
        }
        Ok(())
    }
}

/// Feed `inputs` (then every reply they lead to) to `engine`, answering calls with
/// `answer`. Returns the totals and every event. Calls left pending when the inputs
/// run out are answered too, so the run settles.
pub fn drive(
    engine: &mut Engine,
    writer: Option<&mut SessionWriter>,
    inputs: Vec<Input>,
    answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
) -> Result<(Totals, Vec<Event>), SessionError> {
    let no_tools =
        |_: &ToolRequest| ToolResult { text: "No tools are available in this run.".into(), ok: false, latency_ms: 0 };
    drive_with_tools(engine, writer, inputs, answer, no_tools)
}

/// [`drive`], with tool calls answered by `tool`.
pub fn drive_with_tools(
    engine: &mut Engine,
    writer: Option<&mut SessionWriter>,
    inputs: Vec<Input>,
    mut answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
    mut tool: impl FnMut(&ToolRequest) -> ToolResult,
) -> Result<(Totals, Vec<Event>), SessionError> {
    let mut run = Run { engine, writer, queue: VecDeque::new(), totals: Totals::default(), events: Vec::new() };
    for input in inputs {
        // Answer what the previous input asked before the next command, as a person would wait.
        run.settle(&mut answer, &mut tool)?;
        run.apply(input, None)?;
    }
    run.settle(&mut answer, &mut tool)?;
    Ok((run.totals, run.events))
}
