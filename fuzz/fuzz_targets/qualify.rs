//! Fuzzes `berthd::fuzz_checks::check_qualify`; the same check replays the corpus
//! on stable in `daemon/tests/fuzz_corpus.rs`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    berthd::fuzz_checks::check_qualify(data);
});
