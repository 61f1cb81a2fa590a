//! The ranked Game of 24 puzzle list.

use crate::arith::{parse_numbers, Q};

/// The ranked puzzle list (`rank,numbers`), derived from the Tree-of-Thoughts `24.csv`.
pub const PUZZLES_CSV: &str = include_str!("../../../assets/game24/puzzles.csv");

/// (rank, numbers) in ranked order; index i is 0-based like Python's range (index 900 is rank 901).
pub fn puzzles() -> Result<Vec<(u32, Vec<Q>)>, String> {
    let mut lines = PUZZLES_CSV.lines();
    match lines.next() {
        Some(h) if h.trim() == "rank,numbers" => {}
        other => return Err(format!("puzzles.csv: expected header `rank,numbers`, found {:?}", other.unwrap_or(""))),
    }
    let mut out = Vec::new();
    for (k, line) in lines.enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let lineno = k + 2;
        let (rank, nums) = line.split_once(',').ok_or_else(|| format!("puzzles.csv line {lineno}: no comma"))?;
        let rank: u32 = rank.trim().parse().map_err(|_| format!("puzzles.csv line {lineno}: bad rank {rank:?}"))?;
        let numbers = parse_numbers(nums).ok_or_else(|| format!("puzzles.csv line {lineno}: bad numbers {nums:?}"))?;
        out.push((rank, numbers));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::arith::testing::qs;

    #[test]
    fn puzzle_asset() {
        let all = puzzles().unwrap();
        assert_eq!(all.len(), 1362);
        assert_eq!(all[0], (1, qs("1 1 4 6")));
        assert_eq!(all[900], (901, qs("4 5 6 10")));
        assert_eq!(all[999], (1000, qs("4 9 10 13")));
        assert_eq!(all[1361], (1362, qs("2 3 5 12")));
        for (i, (rank, nums)) in all.iter().enumerate() {
            assert_eq!(*rank as usize, i + 1);
            assert_eq!(nums.len(), 4);
        }
    }
}
