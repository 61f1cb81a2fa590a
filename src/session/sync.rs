//! A synchronous driver for runs whose replies need no waiting (importers, demo
//! recording, tests): calls are answered in request order as they are made, and
//! every input is recorded like a live run records it.

use std::collections::VecDeque;

use super::{SessionError, SessionWriter, Totals};
use crate::engine::{CallError, Effect, Engine, Event, Input, LlmReply, LlmRequest, LlmResponse};

/// Feed `inputs` (then every reply they lead to) to `engine`, answering calls with
/// `answer`. Returns the totals and every event. Calls left pending when the inputs
/// run out are answered too, so the run settles.
pub fn drive(
    engine: &mut Engine,
    mut writer: Option<&mut SessionWriter>,
    inputs: Vec<Input>,
    mut answer: impl FnMut(&LlmRequest) -> Result<LlmResponse, CallError>,
) -> Result<(Totals, Vec<Event>), SessionError> {
    let mut queue: VecDeque<(u64, LlmRequest)> = VecDeque::new();
    let mut totals = Totals::default();
    let mut all = Vec::new();
    let mut apply = |engine: &mut Engine,
                     queue: &mut VecDeque<(u64, LlmRequest)>,
                     input: Input,
                     request: Option<&LlmRequest>,
                     writer: Option<&mut SessionWriter>|
     -> Result<(), SessionError> {
        totals.count(&input);
        let effects = engine.handle(input.clone());
        let mut events = Vec::new();
        for e in effects {
            match e {
                Effect::CallLlm { call, request } => queue.push_back((call, request)),
                Effect::Cancel { calls } => queue.retain(|(c, _)| !calls.contains(c)),
                Effect::Emit { event } => events.push(event),
            }
        }
        if let Some(w) = writer {
            w.input(&input, request, &events)?;
        }
        all.extend(events);
        Ok(())
    };
    for input in inputs {
        // Answer what the previous input asked before the next command, as a person would wait.
        while let Some((call, request)) = queue.pop_front() {
            let reply = Input::LlmReply(LlmReply { call, result: answer(&request) });
            apply(engine, &mut queue, reply, Some(&request), writer.as_deref_mut())?;
        }
        apply(engine, &mut queue, input, None, writer.as_deref_mut())?;
    }
    while let Some((call, request)) = queue.pop_front() {
        let reply = Input::LlmReply(LlmReply { call, result: answer(&request) });
        apply(engine, &mut queue, reply, Some(&request), writer.as_deref_mut())?;
    }
    Ok((totals, all))
}
