//! Input-output prompting: k direct answers; success per sample and best-of-k.
//! The implementation is cot's too ([`WholeAnswers`]), asking the task's IO prompt.

use crate::engine::MethodKind;
use crate::protocol::Purpose;

use super::samples::{WholeAnswers, SAMPLES};
use super::{MethodInfo, Needs, ReactShape};

/// Registration (see `methods::REGISTRY`).
pub const KIND: MethodKind = MethodKind("io");
pub const INFO: MethodInfo = MethodInfo {
    kind: KIND,
    about: "IO prompting: k whole answers, no reasoning",
    react: ReactShape::None,
    uses_tools: false,
    needs: |_| Needs::of(&[], &[Purpose::Io]),
    params: &[&SAMPLES],
    wants_memory: super::no_memory,
    build: |p| WholeAnswers::build(KIND, Purpose::Io, p),
};
