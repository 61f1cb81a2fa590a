//! Importers: other tools' logs turned into sessions by running them through the real
//! engine (the reference Tree-of-Thoughts logs, ReAct's text trajectories).

pub mod react;
pub mod tot;
