//! The run's one concurrency limit on model calls, handing free slots to the most
//! urgent waiting call rather than the longest waiting one.
//!
//! Each waiting call carries a [`Priority`] (the driver gives calls of a problem fewer
//! round trips into its search, and then of an earlier problem, precedence), so the
//! problems furthest from their end go first. Which call gets a slot changes when
//! replies come, never what they say: results stay those of a sequential run.
//!
//! Measured on `bench --http-only` it does not pay: as fast as first come first served
//! where a server honours `n`, slower where samples fan out one request each (2.27 s
//! against 2.07 s for 5 puzzles, 35.2 s against 30.5 s for 100), so headless runs use
//! a plain [`tokio::sync::Semaphore`]; [`Limit`] is either. [`rounds_bound`] is what
//! showed why: the rounds that meet, not the order, set the wall.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// How urgent a waiting call is: the smaller, the sooner it gets a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Priority {
    /// Round trips of its problem before this call (replies it followed from).
    pub depth: u32,
    /// Its problem's place in the run.
    pub problem: u32,
}

/// A problem's calls sent at one number of round trips into its search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Round {
    pub calls: u64,
    /// The samples they asked for (requests, where a server returns one at a time).
    pub samples: u64,
}

/// The fewest round trips in which problems with these rounds can be done under
/// `slots` concurrent requests, each round waiting for the one before it, problem `p`
/// beginning after `starts[p]` round trips (`units[p][d]` requests at depth `d`).
///
/// A lower bound, not a schedule: for every set of rounds that cannot begin before
/// round trip `e` and leave at least `q` round trips after them, the run takes at
/// least `e + ⌈their requests ÷ slots⌉ + q` (heads, bodies and tails). The critical
/// path is the case of one round each; all requests ÷ slots the case of every round.
pub fn rounds_bound(units: &[Vec<u64>], starts: &[u64], slots: usize) -> u64 {
    let slots = slots.max(1) as u64;
    // (earliest start, round trips after it, requests) of every non-empty round.
    let mut rounds: Vec<(u64, u64, u64)> = Vec::new();
    for (p, levels) in units.iter().enumerate() {
        let start = starts.get(p).copied().unwrap_or(0);
        let Some(last) = levels.iter().rposition(|&k| k > 0) else { continue };
        for (d, &k) in levels.iter().enumerate().take(last + 1) {
            if k > 0 {
                rounds.push((start + d as u64, (last - d) as u64, k));
            }
        }
    }
    let mut heads: Vec<u64> = rounds.iter().map(|r| r.0).collect();
    let mut tails: Vec<u64> = rounds.iter().map(|r| r.1).collect();
    heads.sort_unstable();
    heads.dedup();
    tails.sort_unstable();
    tails.dedup();
    let mut best = 0;
    for &e in &heads {
        for &q in &tails {
            let work: u64 = rounds.iter().filter(|r| r.0 >= e && r.1 >= q).map(|r| r.2).sum();
            if work > 0 {
                best = best.max(e + work.div_ceil(slots) + q);
            }
        }
    }
    best
}

/// A concurrency limit: first come first served, or by priority.
#[derive(Clone)]
pub enum Limit {
    Fifo(Arc<Semaphore>),
    Priority(Arc<PriorityLimit>),
}

impl From<Arc<Semaphore>> for Limit {
    fn from(s: Arc<Semaphore>) -> Self {
        Limit::Fifo(s)
    }
}

impl From<Arc<PriorityLimit>> for Limit {
    fn from(p: Arc<PriorityLimit>) -> Self {
        Limit::Priority(p)
    }
}

/// A slot of a [`Limit`], given back when dropped.
pub enum Permit {
    Fifo(#[allow(dead_code)] OwnedSemaphorePermit),
    Priority(PriorityPermit),
}

impl Limit {
    /// A slot, when one is free for a call of this priority; `None` if the limit was
    /// closed (the program is shutting down).
    pub async fn acquire(&self, priority: Priority) -> Option<Permit> {
        match self {
            Limit::Fifo(s) => Arc::clone(s).acquire_owned().await.ok().map(Permit::Fifo),
            Limit::Priority(p) => Some(Permit::Priority(p.acquire(priority).await)),
        }
    }
}

/// A counting limit whose free slots go to the waiting call of the smallest
/// [`Priority`], then to the one that asked first.
pub struct PriorityLimit {
    state: Mutex<State>,
}

struct State {
    free: usize,
    waiting: BinaryHeap<Waiter>,
    asked: u64,
}

/// One call waiting for a slot; shared between the queue and the waiting future.
struct Ticket {
    /// Set under the state lock when a slot is handed to it.
    granted: AtomicBool,
    /// Set under the state lock when its future was dropped before a slot came.
    gone: AtomicBool,
    notify: Notify,
}

struct Waiter {
    priority: Priority,
    asked: u64,
    ticket: Arc<Ticket>,
}

impl PartialEq for Waiter {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == CmpOrdering::Equal
    }
}
impl Eq for Waiter {}
impl PartialOrd for Waiter {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiter {
    /// The heap pops its greatest: the smallest priority, then the first asked.
    fn cmp(&self, other: &Self) -> CmpOrdering {
        (other.priority, other.asked).cmp(&(self.priority, self.asked))
    }
}

/// A slot of a [`PriorityLimit`], handed on to the next waiting call when dropped.
pub struct PriorityPermit {
    limit: Arc<PriorityLimit>,
}

impl Drop for PriorityPermit {
    fn drop(&mut self) {
        self.limit.release();
    }
}

/// Withdraws a waiting call whose future is dropped, or gives back a slot it was
/// handed but never took.
struct Waiting {
    limit: Arc<PriorityLimit>,
    ticket: Arc<Ticket>,
    taken: bool,
}

impl Drop for Waiting {
    fn drop(&mut self) {
        if self.taken {
            return;
        }
        let granted = {
            let _state = self.limit.lock();
            self.ticket.gone.store(true, Ordering::SeqCst);
            self.ticket.granted.load(Ordering::SeqCst)
        };
        if granted {
            self.limit.release();
        }
    }
}

impl PriorityLimit {
    pub fn new(slots: usize) -> Arc<Self> {
        Arc::new(PriorityLimit { state: Mutex::new(State { free: slots, waiting: BinaryHeap::new(), asked: 0 }) })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Slots free right now.
    pub fn available(&self) -> usize {
        self.lock().free
    }

    /// A slot, as soon as no waiting call of a smaller priority wants it.
    pub async fn acquire(self: &Arc<Self>, priority: Priority) -> PriorityPermit {
        let ticket = {
            let mut state = self.lock();
            if state.free > 0 && state.waiting.is_empty() {
                state.free -= 1;
                return PriorityPermit { limit: Arc::clone(self) };
            }
            let ticket = Arc::new(Ticket {
                granted: AtomicBool::new(false),
                gone: AtomicBool::new(false),
                notify: Notify::new(),
            });
            state.asked += 1;
            let asked = state.asked;
            state.waiting.push(Waiter { priority, asked, ticket: Arc::clone(&ticket) });
            // Slots may be free with others waiting only for a moment; hand them out now.
            Self::hand_out(&mut state);
            ticket
        };
        let mut waiting = Waiting { limit: Arc::clone(self), ticket, taken: false };
        while !waiting.ticket.granted.load(Ordering::SeqCst) {
            waiting.ticket.notify.notified().await;
        }
        waiting.taken = true;
        PriorityPermit { limit: Arc::clone(self) }
    }

    /// Give a slot back: to the most urgent call still waiting, or to the free pool.
    fn release(&self) {
        let mut state = self.lock();
        state.free += 1;
        Self::hand_out(&mut state);
    }

    fn hand_out(state: &mut State) {
        while state.free > 0 {
            let Some(next) = state.waiting.pop() else { return };
            if next.ticket.gone.load(Ordering::SeqCst) {
                continue;
            }
            state.free -= 1;
            next.ticket.granted.store(true, Ordering::SeqCst);
            next.ticket.notify.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn p(depth: u32, problem: u32) -> Priority {
        Priority { depth, problem }
    }

    #[test]
    fn the_rounds_bound_counts_slot_limited_rounds() {
        // One problem, rounds of 1, 8 and 1 requests: 3 round trips with room for all,
        // 2 more when 4 slots take the 8 in two goes.
        assert_eq!(rounds_bound(&[vec![1, 8, 1]], &[0], 64), 3);
        assert_eq!(rounds_bound(&[vec![1, 8, 1]], &[0], 4), 4);
        assert_eq!(rounds_bound(&[vec![1, 8, 1]], &[0], 1), 10);
        // Two problems whose big rounds meet: 2 × 36 at round trip 1 on 64 slots cannot
        // all go at once, and each still has a round after it.
        assert_eq!(rounds_bound(&[vec![1, 36, 5], vec![1, 36, 5]], &[0, 0], 64), 4);
        // The second starting a round trip later lets the rounds pass each other.
        assert_eq!(rounds_bound(&[vec![1, 36, 5], vec![1, 36, 5]], &[0, 1], 64), 4);
        assert_eq!(rounds_bound(&[], &[], 8), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn a_freed_slot_goes_to_the_most_urgent_waiting_call() {
        let limit = PriorityLimit::new(1);
        let held = limit.acquire(p(0, 0)).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        // Asked in the order least urgent first.
        for (i, pr) in [p(3, 0), p(1, 2), p(1, 1), p(0, 4)].into_iter().enumerate() {
            let (limit, order) = (Arc::clone(&limit), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                let _slot = limit.acquire(pr).await;
                order.lock().unwrap().push(i);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }));
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![3, 2, 1, 0]);
        assert_eq!(limit.available(), 1);
    }

    #[tokio::test(start_paused = true)]
    async fn equal_priorities_go_first_come_first_served() {
        let limit = PriorityLimit::new(1);
        let held = limit.acquire(p(0, 0)).await;
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        for i in 0..4 {
            let (limit, order) = (Arc::clone(&limit), Arc::clone(&order));
            tasks.push(tokio::spawn(async move {
                let _slot = limit.acquire(p(2, 2)).await;
                order.lock().unwrap().push(i);
            }));
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_waiter_loses_no_slot() {
        let limit = PriorityLimit::new(2);
        let a = limit.acquire(p(0, 0)).await;
        let b = limit.acquire(p(0, 0)).await;
        // One waiter aborted while queued, one aborted right after it was handed a slot.
        let queued = tokio::spawn({
            let limit = Arc::clone(&limit);
            async move {
                let _s = limit.acquire(p(5, 0)).await;
                std::future::pending::<()>().await;
            }
        });
        let handed = tokio::spawn({
            let limit = Arc::clone(&limit);
            async move {
                let _s = limit.acquire(p(0, 0)).await;
            }
        });
        tokio::time::sleep(Duration::from_millis(1)).await;
        queued.abort();
        let _ = queued.await;
        drop(a);
        // `handed` was granted a slot; whether or not it ran, the slot comes back.
        handed.abort();
        let _ = handed.await;
        drop(b);
        assert_eq!(limit.available(), 2);
        let c = limit.acquire(p(9, 9)).await;
        let d = limit.acquire(p(9, 9)).await;
        drop((c, d));
        assert_eq!(limit.available(), 2);
    }
}
