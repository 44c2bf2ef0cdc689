//! Which of the records a producer was sent, under ids counted up from 0, have been
//! answered. Reports come per partition in order but in no order across partitions, so the
//! lowest unanswered id is found from a bit per record still outstanding, not from the last
//! report.

use std::collections::VecDeque;

const WORD_BITS: usize = u64::BITS as usize;

/// Every id below `below` is answered; bit `i` of word `w` of `beyond` says whether id
/// `below + 64 * w + i` is.
#[derive(Debug, Default)]
pub(crate) struct AnsweredIds {
    below: usize,
    beyond: VecDeque<u64>,
}

impl AnsweredIds {
    /// Record `id` as answered; an id answered before, or forgotten, changes nothing.
    pub fn answer(&mut self, id: usize) {
        let Some(distance) = id.checked_sub(self.below) else {
            return;
        };
        let word = distance / WORD_BITS;
        if self.beyond.len() <= word {
            self.beyond.resize(word + 1, 0);
        }
        self.beyond[word] |= 1 << (distance % WORD_BITS);
        while self.beyond.front() == Some(&u64::MAX) {
            self.beyond.pop_front();
            self.below += WORD_BITS;
        }
    }

    /// The lowest id not answered yet.
    pub fn all_below(&self) -> usize {
        let answered_in_front = self
            .beyond
            .front()
            .map_or(0, |w| w.trailing_ones() as usize);
        self.below + answered_in_front
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_answered_out_of_order_count_once_every_lower_one_is_in() {
        let mut answered = AnsweredIds::default();
        assert_eq!(answered.all_below(), 0);
        answered.answer(1);
        answered.answer(2);
        assert_eq!(answered.all_below(), 0);
        answered.answer(0);
        assert_eq!(answered.all_below(), 3);
        answered.answer(3);
        answered.answer(3);
        assert_eq!(answered.all_below(), 4);
    }

    #[test]
    fn the_lowest_unanswered_id_is_found_across_many_words() {
        let mut answered = AnsweredIds::default();
        // Two interleaved partitions: even ids answered up to 300, odd ones up to 129.
        for id in (0..300).step_by(2) {
            answered.answer(id);
        }
        for id in (1..130).step_by(2) {
            answered.answer(id);
        }
        assert_eq!(answered.all_below(), 131);
        assert!(
            answered.beyond.len() <= 3,
            "whole words of answered ids are dropped"
        );
        for id in (131..300).step_by(2) {
            answered.answer(id);
        }
        assert_eq!(answered.all_below(), 300);
        answered.answer(5);
        assert_eq!(
            answered.all_below(),
            300,
            "an id answered long ago changes nothing"
        );
    }
}
