//! A [`Code`] and its hints on a gRPC status. The daemon attaches a code to every error it
//! returns (metadata key [`CODE_HEADER`]); an error's hints, the next steps the daemon knows,
//! travel beside it, one [`HINT_HEADER`] entry each, so every client shows them its own way
//! (docs/decisions/0022-error-hints-cross-the-rpc-as-metadata.md).

use berth_vocab::codes::Code;
use tonic::metadata::BinaryMetadataValue;

/// Metadata key carrying a [`Code`] on an error status.
pub const CODE_HEADER: &str = "berth-code";

/// Metadata key (binary: any UTF-8 survives) carrying one hint of an error
/// status; repeated, in order.
pub const HINT_HEADER: &str = "berth-hint-bin";

/// Longest error message sent, in bytes; the hints together get as much.
pub const MAX_MESSAGE_CHARS: usize = 2048;

/// A [`Code`] as a gRPC status: the code is vocabulary shared with crates that know no gRPC,
/// so the protocol adds its wire form as a trait.
pub trait CodeStatus: Sized {
    /// Builds a status carrying this code. The message travels in an HTTP/2
    /// trailer, so it is cut to [`MAX_MESSAGE_CHARS`]: a message quoting a
    /// hostile 64 KiB path would otherwise overflow the peer's header limit
    /// and break the connection.
    fn status(self, message: impl Into<String>) -> tonic::Status;

    /// [`CodeStatus::status`] with hints, in order. They share a budget of
    /// [`MAX_MESSAGE_CHARS`]: a hint past it is cut, and later ones dropped.
    fn status_with_hints(self, message: impl Into<String>, hints: &[String]) -> tonic::Status;

    /// Reads the code off a status, if the daemon attached one.
    fn of(status: &tonic::Status) -> Option<Self>;
}

impl CodeStatus for Code {
    fn status(self, message: impl Into<String>) -> tonic::Status {
        let message = cut(message.into(), MAX_MESSAGE_CHARS);
        let grpc = match self {
            Code::NotFound => tonic::Code::NotFound,
            Code::Refused => tonic::Code::FailedPrecondition,
            Code::Invalid | Code::BadArgument => tonic::Code::InvalidArgument,
            Code::DaemonOutdated | Code::ClientOutdated | Code::OtherDataDir => {
                tonic::Code::FailedPrecondition
            }
            Code::Internal => tonic::Code::Internal,
            Code::NotRegularFile => tonic::Code::FailedPrecondition,
            Code::ShuttingDown => tonic::Code::Unavailable,
            Code::TimedOut => tonic::Code::DeadlineExceeded,
            Code::SessionOwned => tonic::Code::PermissionDenied,
            Code::DiskFull => tonic::Code::ResourceExhausted,
            // `Code` may grow (it is non-exhaustive); clients branch on `berth-code`, not this.
            _ => tonic::Code::Unknown,
        };
        let mut status = tonic::Status::new(grpc, message);
        status
            .metadata_mut()
            .insert(CODE_HEADER, self.as_str().parse().expect("codes are ASCII"));
        status
    }

    fn status_with_hints(self, message: impl Into<String>, hints: &[String]) -> tonic::Status {
        let mut status = self.status(message);
        let mut left = MAX_MESSAGE_CHARS;
        for hint in hints {
            if left == 0 {
                break;
            }
            let hint = cut(hint.clone(), left);
            left = left.saturating_sub(hint.len());
            status.metadata_mut().append_bin(
                HINT_HEADER,
                BinaryMetadataValue::from_bytes(hint.as_bytes()),
            );
        }
        status
    }

    fn of(status: &tonic::Status) -> Option<Code> {
        status
            .metadata()
            .get(CODE_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(Code::parse)
    }
}

/// The hints on a status, in order (none from a daemon that sends none).
pub fn hints(status: &tonic::Status) -> Vec<String> {
    status
        .metadata()
        .get_all_bin(HINT_HEADER)
        .iter()
        .filter_map(|v| v.to_bytes().ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .collect()
}

/// `text` cut to at most `max` bytes on a character boundary, with `…`
/// saying so.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut at = max;
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        text.truncate(at);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_message_is_cut_on_a_character_boundary() {
        let s = Code::Refused.status("é".repeat(40_000));
        assert!(s.message().len() <= MAX_MESSAGE_CHARS + '…'.len_utf8());
        assert!(s.message().ends_with('…'));
    }

    #[test]
    fn hints_survive_a_round_trip_in_order_and_share_a_budget() {
        let sent = vec![
            "run `berth workspace create plans` — then again".to_string(),
            "ö".into(),
        ];
        let s = Code::NotFound.status_with_hints("no workspace plans", &sent);
        assert_eq!(hints(&s), sent);
        assert_eq!(s.message(), "no workspace plans");
        assert!(hints(&Code::NotFound.status("x")).is_empty());
        let long = vec!["é".repeat(2000), "b".into()];
        let got = hints(&Code::Refused.status_with_hints("x", &long));
        assert_eq!(got.len(), 1, "the second hint is past the budget");
        assert!(got[0].ends_with('…') && got[0].len() <= MAX_MESSAGE_CHARS + 3);
    }

    #[test]
    fn every_code_survives_a_round_trip_through_a_status() {
        for code in [
            Code::NotFound,
            Code::Refused,
            Code::Invalid,
            Code::DaemonOutdated,
            Code::ClientOutdated,
            Code::Internal,
            Code::NotRegularFile,
            Code::ShuttingDown,
            Code::TimedOut,
            Code::BadArgument,
            Code::OtherDataDir,
            Code::SessionOwned,
            Code::DiskFull,
        ] {
            assert_eq!(Code::of(&code.status("x")), Some(code));
        }
    }
}
