//! Undo and redo of the editor's state. Typing into one field makes one
//! step, not one per keystroke; any other change is a step of its own.

use gco_spec::json::Value;

/// Edits of one field within this many milliseconds are one undo step.
const COALESCE_MS: f64 = 1000.0;
/// Undo steps kept.
const LIMIT: usize = 200;

#[derive(Debug, Default)]
pub struct History {
    past: Vec<Value>,
    future: Vec<Value>,
    /// The field edited last, and when (ms): its next edit may join that step.
    last_edit: Option<(String, f64)>,
}

impl History {
    /// Notes the state `before` an edit of `field` (`None`: the whole state
    /// replaced) made at `now` (ms). Redo is gone after an edit.
    pub fn record(&mut self, before: &Value, field: Option<&str>, now: f64) {
        let same_step = match (&self.last_edit, field) {
            (Some((last, at)), Some(field)) => last == field && now - at < COALESCE_MS,
            _ => false,
        };
        if !same_step {
            self.past.push(before.clone());
            if self.past.len() > LIMIT {
                self.past.remove(0);
            }
        }
        self.future.clear();
        self.last_edit = field.map(|f| (f.to_owned(), now));
    }

    /// The state before the last step, with `current` kept for redo.
    pub fn undo(&mut self, current: Value) -> Option<Value> {
        Self::step(
            &mut self.past,
            &mut self.future,
            &mut self.last_edit,
            current,
        )
    }

    /// The state the last undo left, with `current` kept for undo.
    pub fn redo(&mut self, current: Value) -> Option<Value> {
        Self::step(
            &mut self.future,
            &mut self.past,
            &mut self.last_edit,
            current,
        )
    }

    fn step(
        from: &mut Vec<Value>,
        to: &mut Vec<Value>,
        last_edit: &mut Option<(String, f64)>,
        current: Value,
    ) -> Option<Value> {
        // The next edit is a step of its own, whatever it edits.
        *last_edit = None;
        let target = from.pop()?;
        to.push(current);
        Some(target)
    }

    pub fn can_undo(&self) -> bool {
        !self.past.is_empty()
    }

    pub fn can_redo(&self) -> bool {
        !self.future.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(i: i64) -> Value {
        Value::from(i)
    }

    /// Edits `state` to `to`, as the editor does: the history first.
    fn edit(h: &mut History, state: &mut Value, to: Value, field: Option<&str>, now: f64) {
        h.record(state, field, now);
        *state = to;
    }

    #[test]
    fn undo_and_redo_walk_the_steps() {
        let (mut h, mut state) = (History::default(), n(0));
        assert!(!h.can_undo() && !h.can_redo());
        edit(&mut h, &mut state, n(1), None, 0.0);
        edit(&mut h, &mut state, n(2), None, 1.0);
        state = h.undo(state).unwrap();
        assert_eq!(state, n(1));
        state = h.undo(state).unwrap();
        assert_eq!(state, n(0));
        assert_eq!(h.undo(n(0)), None, "nothing before the first state");
        state = h.redo(state).unwrap();
        state = h.redo(state).unwrap();
        assert_eq!(state, n(2));
        assert_eq!(h.redo(state.clone()), None);
    }

    #[test]
    fn typing_into_one_field_is_one_step() {
        let (mut h, mut state) = (History::default(), n(0));
        edit(&mut h, &mut state, n(1), Some("image"), 0.0);
        edit(&mut h, &mut state, n(2), Some("image"), 400.0);
        edit(&mut h, &mut state, n(3), Some("image"), 1300.0);
        assert_eq!(
            h.undo(state).unwrap(),
            n(0),
            "each edit within 1 s of the last"
        );
    }

    #[test]
    fn a_pause_another_field_or_an_undo_starts_a_step() {
        let (mut h, mut state) = (History::default(), n(0));
        edit(&mut h, &mut state, n(1), Some("image"), 0.0);
        edit(&mut h, &mut state, n(2), Some("image"), 1000.0);
        edit(&mut h, &mut state, n(3), Some("port"), 1100.0);
        state = h.undo(state).unwrap();
        assert_eq!(state, n(2), "another field");
        edit(&mut h, &mut state, n(4), Some("image"), 1200.0);
        assert_eq!(h.undo(state).unwrap(), n(2), "an undo between");
        assert_eq!(h.undo(n(2)).unwrap(), n(1), "a pause of 1 s");
    }

    #[test]
    fn an_edit_drops_what_redo_would_bring_back() {
        let (mut h, mut state) = (History::default(), n(0));
        edit(&mut h, &mut state, n(1), None, 0.0);
        state = h.undo(state).unwrap();
        assert!(h.can_redo());
        edit(&mut h, &mut state, n(5), Some("image"), 10.0);
        assert!(!h.can_redo());
        assert_eq!(h.redo(state), None);
    }

    #[test]
    fn the_oldest_steps_go_past_the_limit() {
        let (mut h, mut state) = (History::default(), n(0));
        for i in 1..=250 {
            edit(&mut h, &mut state, n(i), None, i as f64);
        }
        let mut steps = 0;
        while let Some(before) = h.undo(state.clone()) {
            state = before;
            steps += 1;
        }
        assert_eq!((steps, state), (LIMIT, n(50)));
    }
}
