//! Fuzzes `berth_fuzz_checks::check_project_file`; the same check replays the corpus
//! on stable in `fuzz/checks/tests/corpus.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    berth_fuzz_checks::check_project_file(data);
});
