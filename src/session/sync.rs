//! A synchronous driver for runs whose replies need no waiting (importers, demo
//! recording, tests): calls are answered in request order as they are made, and
//! every input is recorded like a live run records it. There are no tools here: a
//! tool call is answered with an observation saying so.

use std::collections::VecDeque;

use super::{SessionError, SessionWriter, Totals};
use crate::engine::{
    CallError, Effect, Engine, Event, Input, LlmReply, LlmRequest, LlmResponse, ToolReply, ToolResult,
};

struct Run<'a> {
    engine: &'a mut Engine,
    writer: Option<&'a mut SessionWriter>,
    /// Outstanding calls in request order; `None` marks a tool call.
    queue: VecDeque<(u64, Option<LlmRequest>)>,
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
                Effect::CallLlm { call, request } => self.queue.push_back((call, Some(request))),
                Effect::CallTool { call, .. } => self.queue.push_back((call, None)),
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
    ) -> Result<(), SessionError> {
        while let Some((call, request)) = self.queue.pop_front() {
            let input = match &request {
                Some(r) => Input::LlmReply(LlmReply { call, result: answer(r) }),
                None => Input::ToolReply(ToolReply {
                    call,
                    result: ToolResult { text: "No tools are available in this run.".into(), ok: false, latency_ms: 0 },
                }),
            };
            self.apply(input, request.as_ref())?;
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
    mut answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
) -> Result<(Totals, Vec<Event>), SessionError> {
    let mut run = Run { engine, writer, queue: VecDeque::new(), totals: Totals::default(), events: Vec::new() };
    for input in inputs {
        // Answer what the previous input asked before the next command, as a person would wait.
        run.settle(&mut answer)?;
        run.apply(input, None)?;
    }
    run.settle(&mut answer)?;
    Ok((run.totals, run.events))
}
