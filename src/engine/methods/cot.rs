//! Chain-of-thought prompting: k step-by-step answers; success per sample and best-of-k.
//! The implementation is io's too ([`WholeAnswers`]), asking the task's CoT prompt.

use crate::engine::MethodKind;
use crate::protocol::Purpose;

use super::samples::{WholeAnswers, SAMPLES};
use super::{MethodInfo, Needs, ReactShape};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("cot");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "chain of thought: k whole answers with their reasoning",
    react: ReactShape::None,
    uses_tools: false,
    needs: |_| Needs::of(&[], &[Purpose::Cot]),
    params: &[&SAMPLES],
    wants_memory: super::no_memory,
    build: |p| WholeAnswers::build(KIND, Purpose::Cot, p),
};
