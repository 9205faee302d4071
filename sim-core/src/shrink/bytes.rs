//! The classic passes over the draws themselves, blind to their meaning: cutting the tail,
//! deleting chunks and blocks, zeroing, lowering values.

use super::*;

impl Search<'_, '_> {
    /// Tries the best input with draw `i` zeroed and the draws from `i + 1` up to `end`
    /// deleted; true when that became the best.
    pub(super) fn zero_and_cut(&mut self, i: usize, end: usize) -> bool {
        let mut candidate = self.best.draws[..=i].to_vec();
        zero(&mut candidate[i]);
        candidate.extend_from_slice(&self.best.draws[end..]);
        self.attempt(&candidate)
    }

    /// Zeroes a draw together with the one or two draws right after it. A choice that turns
    /// something on often draws its details next (a quiet period, then its length): zeroed
    /// alone it leaves those details to be read as the next decisions, shifting everything
    /// after; deleted with them, the rest of the run stays where it was.
    pub(super) fn zero_and_drop_dependents(&mut self) {
        let mut i = 0;
        while i + 1 < self.best.draws.len() && !self.exhausted() {
            if !is_zero(&self.best.draws[i]) {
                for dependents in 1..=2 {
                    let end = i + 1 + dependents;
                    if end > self.best.draws.len() || self.zero_and_cut(i, end) {
                        break;
                    }
                }
            }
            i += 1;
        }
    }

    pub(super) fn cut_tail(&mut self) {
        for eighths in 0..8 {
            let keep = self.best.draws.len() * eighths / 8;
            let prefix = self.best.draws[..keep].to_vec();
            if self.attempt(&prefix) {
                return;
            }
        }
    }

    /// Deletes aligned chunks of draws, halving the chunk size from half the input down to 16
    /// (as delta debugging does). A long run has thousands of draws: sliding blocks of at most
    /// 8 draws one position at a time would spend the whole run budget in one round.
    pub(super) fn delete_chunks(&mut self) {
        let mut size = self.best.draws.len() / 2;
        while size >= 16 && !self.exhausted() {
            let mut i = 0;
            while i + size <= self.best.draws.len() && !self.exhausted() {
                let mut candidate = self.best.draws[..i].to_vec();
                candidate.extend_from_slice(&self.best.draws[i + size..]);
                if !self.attempt(&candidate) {
                    i += size;
                }
            }
            size /= 2;
        }
    }

    pub(super) fn delete_blocks(&mut self, k: usize) {
        let mut i = 0;
        while i + k <= self.best.draws.len() && !self.exhausted() {
            let mut candidate = self.best.draws[..i].to_vec();
            candidate.extend_from_slice(&self.best.draws[i + k..]);
            if !self.attempt(&candidate) {
                i += 1;
            }
        }
    }

    pub(super) fn zero_blocks(&mut self, k: usize) {
        let mut i = 0;
        while i + k <= self.best.draws.len() && !self.exhausted() {
            let block = &self.best.draws[i..i + k];
            if block.iter().any(|d| !is_zero(d)) {
                let mut candidate = self.best.draws.clone();
                candidate[i..i + k].iter_mut().for_each(zero);
                self.attempt(&candidate);
            }
            i += 1;
        }
    }

    pub(super) fn lower_values(&mut self) {
        let mut i = 0;
        while i < self.best.draws.len() && !self.exhausted() {
            match self.best.draws[i].value.clone() {
                DrawValue::Int { value, .. } => self.lower(value, |draws, v| {
                    if let Some(DrawValue::Int { value, .. }) =
                        draws.get_mut(i).map(|d| &mut d.value)
                    {
                        *value = v;
                    }
                }),
                DrawValue::Event { fired: true } => {
                    let mut draws = self.best.draws.clone();
                    draws[i].value = DrawValue::Event { fired: false };
                    self.attempt(&draws);
                }
                DrawValue::Event { fired: false } => {}
                DrawValue::Raw(bytes) => {
                    for (b, &byte) in bytes.iter().enumerate() {
                        self.lower(u64::from(byte), |draws, v| {
                            if let Some(DrawValue::Raw(raw)) =
                                draws.get_mut(i).map(|d| &mut d.value)
                            {
                                if let Some(slot) = raw.get_mut(b) {
                                    *slot = v as u8;
                                }
                            }
                        });
                    }
                }
            }
            i += 1;
        }
    }

    /// Lowers one value (written into a copy of the best draws by `set`): 0 first, then a
    /// binary search between the largest value seen to fail differently and the current one.
    pub(super) fn lower(&mut self, value: u64, set: impl Fn(&mut Vec<Draw>, u64)) {
        let try_value = |search: &mut Self, v: u64| {
            let mut draws = search.best.draws.clone();
            set(&mut draws, v);
            search.attempt(&draws)
        };
        if value == 0 || try_value(self, 0) {
            return;
        }
        let (mut lo, mut hi) = (0u64, value);
        while hi - lo > 1 && !self.exhausted() {
            let mid = lo + (hi - lo) / 2;
            if try_value(self, mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
}

pub(super) fn is_zero(draw: &Draw) -> bool {
    match &draw.value {
        DrawValue::Int { value, .. } => *value == 0,
        DrawValue::Raw(bytes) => bytes.iter().all(|&b| b == 0),
        DrawValue::Event { fired } => !fired,
    }
}

pub(super) fn zero(draw: &mut Draw) {
    match &mut draw.value {
        DrawValue::Int { value, .. } => *value = 0,
        DrawValue::Raw(bytes) => bytes.iter_mut().for_each(|b| *b = 0),
        DrawValue::Event { fired } => *fired = false,
    }
}
