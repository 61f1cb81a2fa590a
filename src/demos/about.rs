//! The bundled demos' titles (the explorer's caption headings) and notes (their
//! sessions' one line on what they show).

pub(super) const BFS_TITLE: &str = "Beam search over thoughts";
pub(super) const DFS_TITLE: &str = "Depth first, with backtracking";
pub(super) const EDIT_TITLE: &str = "A person rescues a greedy search";
pub(super) const MCTS_TITLE: &str = "Monte Carlo tree search";
pub(super) const COT_SC_TITLE: &str = "Self-consistency: the vote";
pub(super) const REACT_TITLE: &str = "A person edits a ReAct step";
pub(super) const THINKING_TITLE: &str = "A reasoning model's search (simulated thinking)";
pub(super) const THINKING_NOTE: &str =
    "ToT-BFS over a model that thinks before each answer (the simulated model's thinking \
     mode): each call's thinking is kept apart from its answer, shown in the detail pane and counted as reasoning \
     tokens, and never read as a step or a value";
pub(super) const RETREVAL_LEARNS_TITLE: &str = "ReTreVal: a typed failure, a backtrack, a lesson";
pub(super) const RETREVAL_USES_TITLE: &str = "ReTreVal: the lesson on the next problem";
pub(super) const RETREVAL_LEARNS_NOTE: &str =
    "ReTreVal rates the problem's complexity, tries several approaches with tools, scores them \
     (local, cross, skepticism), validates the best, and on a typed failure backtracks to a sibling approach; \
     the failure becomes a memory entry";
pub(super) const RETREVAL_USES_NOTE: &str =
    "The next problem of the same run starts from that memory: the failure entry is \
     retrieved into the attempts' prompts as a lesson and credited with the outcome";
pub(super) const COT_SC_NOTE: &str =
    "CoT-SC samples several chains of thought for a two-hop question and answers with the majority of their answers";
pub(super) const REACT_NOTE: &str =
    "A ReAct agent with 4 steps takes a wrong turn and runs out; a person rewrites that step and the agent answers";
pub(super) const BFS_NOTE: &str = "ToT-BFS keeps the 5 best-valued states per step and reaches 24 in four steps";
pub(super) const DFS_NOTE: &str = "ToT-DFS tries the best child first, prunes below the threshold and backtracks";
pub(super) const MCTS_NOTE: &str =
    "MCTS picks children by UCT (mean value plus exploration), values them and backs rewards up; N and Q on each node";
pub(super) const EDIT_NOTE: &str =
    "A greedy search (b=1) keeps a dead end and fails; a person edits the step and the search recovers";
