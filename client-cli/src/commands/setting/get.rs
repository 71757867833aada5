//! `berth setting get KEY`

use berth_proto::pb;

use super::KeyArg;
use crate::context::Ctx;
use crate::output::{self, CliError};

/// Runs `berth setting get`.
pub async fn cmd_setting_get(ctx: &mut Ctx, args: KeyArg) -> Result<(), CliError> {
    let req = pb::SettingRequest {
        key: args.key,
        value: String::new(),
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.get_setting(r).await })
        .await?;
    if ctx.json {
        return output::json(&super::described_json(&reply.key, reply.value.as_deref()));
    }
    // stdout stays the bare value, for scripts; the rest is a note.
    match &reply.value {
        Some(v) => output::text(&format!("{}\n", berth_vocab::text::escaped(v)))?,
        None => output::note(&format!(
            "{} is not set: {}",
            reply.key,
            berth_vocab::settings::Setting::from_key(&reply.key)
                .map(|s| s.when_unset())
                .unwrap_or_default()
        )),
    }
    output::note(&super::described_text(&reply.key));
    Ok(())
}
