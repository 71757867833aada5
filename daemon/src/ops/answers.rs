//! Answers remembered from memory (docs/decisions/0025-resolving-from-memory.md): a resolution
//! from memory, kept with the lookup cache's generation and the registry snapshot it was
//! computed from. While neither has moved, the same request has the same answer, so it is
//! given without walking again.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::{Arc, Mutex};

use berth_core::registry::Registry;
use berth_core::resolve::{Answer, Mode};

/// The most answers kept; past it, all go (a busy device asks about a few folders).
const MOST: usize = 1024;

struct Remembered {
    answer: Answer,
    generation: u64,
    registry: Arc<Registry>,
}

/// Answers for requests without a pin (no workspace argument, no `BERTH_WORKSPACE`, no extra
/// home): only the folder and the mode decide them.
#[derive(Default)]
pub struct Answers {
    /// One map per mode, keyed by the canonical folder's bytes: a normalised path has one
    /// spelling, so comparing bytes is comparing paths, without `Path`'s walk over components.
    kept: Mutex<[Kept; 2]>,
}

type Kept = HashMap<OsString, Remembered, foldhash::fast::RandomState>;

fn slot(mode: Mode) -> usize {
    match mode {
        Mode::Cli => 0,
        Mode::Agent => 1,
    }
}

impl Answers {
    /// The answer for `directory` if it was computed at `generation` from `registry`.
    pub fn get(
        &self,
        directory: &Path,
        mode: Mode,
        generation: u64,
        registry: &Arc<Registry>,
    ) -> Option<Answer> {
        let kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let r = kept[slot(mode)].get(directory.as_os_str())?;
        (r.generation == generation && Arc::ptr_eq(&r.registry, registry)).then(|| r.answer.clone())
    }

    /// Keeps `answer`, computed at `generation` (read before the walk) from `registry`.
    pub fn put(&self, mode: Mode, answer: &Answer, generation: u64, registry: Arc<Registry>) {
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        let kept = &mut kept[slot(mode)];
        if kept.len() >= MOST {
            kept.clear();
        }
        kept.insert(
            answer.directory.as_os_str().to_owned(),
            Remembered {
                answer: answer.clone(),
                generation,
                registry,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use berth_core::resolve::Reason;

    use super::*;

    fn answer(dir: &str) -> Answer {
        Answer {
            workspace: "notes".into(),
            reason: Reason::Root,
            directory: PathBuf::from(dir),
            project: None,
            project_file: None,
            proposal: None,
            notes: Vec::new(),
        }
    }

    #[test]
    fn an_answer_is_given_only_for_its_folder_mode_generation_and_snapshot() {
        let answers = Answers::default();
        let registry = Arc::new(berth_core::registry::fixtures::registry(
            &["notes"],
            "notes",
            &[],
        ));
        answers.put(Mode::Agent, &answer("/a"), 7, registry.clone());
        let dir = Path::new("/a");
        assert_eq!(
            answers.get(dir, Mode::Agent, 7, &registry),
            Some(answer("/a"))
        );
        assert_eq!(
            answers.get(dir, Mode::Agent, 8, &registry),
            None,
            "the cache moved"
        );
        let rebuilt = Arc::new(berth_core::registry::fixtures::registry(
            &["notes"],
            "notes",
            &[],
        ));
        assert_eq!(
            answers.get(dir, Mode::Agent, 7, &rebuilt),
            None,
            "a new snapshot"
        );
        assert_eq!(
            answers.get(dir, Mode::Cli, 7, &registry),
            None,
            "another mode"
        );
        assert_eq!(
            answers.get(Path::new("/b"), Mode::Agent, 7, &registry),
            None
        );
    }
}
