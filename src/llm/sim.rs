//! `sim`: the simulated model as a provider. What it answers is the sans-IO simulator's
//! ([`crate::engine::sim`], which finds the tasks' players through the registry it is
//! given); this adds the configured latency and the provider's name.

use std::time::Duration;

use super::{BoxFuture, CallOptions, Provider};
use crate::engine::sim::{Players, SimConfig, Simulator, SIM_MODEL};
use crate::protocol::{CallError, LlmRequest, LlmResponse};

pub struct SimProvider {
    sim: Simulator,
}

impl SimProvider {
    /// The simulated model of `config`, playing the players `players` registers
    /// (`&tasks::SimPlayers`: every task's).
    pub fn new(config: SimConfig, players: &'static dyn Players) -> Self {
        SimProvider { sim: Simulator::new(config, players) }
    }

    /// The answer without latency (used by the async path and by synchronous tools).
    pub fn answer(&self, request: &LlmRequest) -> Result<LlmResponse, CallError> {
        self.sim.answer(request)
    }

    /// The answer with samples `first..first + n` of the request's draws (see
    /// [`Simulator::answer_from`]).
    pub fn answer_from(&self, request: &LlmRequest, first: u64) -> Result<LlmResponse, CallError> {
        self.sim.answer_from(request, first)
    }
}

impl Provider for SimProvider {
    fn name(&self) -> &str {
        "sim"
    }

    fn model(&self) -> &str {
        SIM_MODEL
    }

    fn simulated(&self) -> bool {
        true
    }

    /// Answers whole (no stream), the same whatever the occurrence.
    fn complete<'a>(
        &'a self,
        request: &'a LlmRequest,
        _options: CallOptions,
    ) -> BoxFuture<'a, Result<LlmResponse, CallError>> {
        Box::pin(async move {
            if self.sim.config.latency_ms > 0 {
                tokio::time::sleep(Duration::from_millis(self.sim.config.latency_ms)).await;
            }
            self.answer(request)
        })
    }
}
