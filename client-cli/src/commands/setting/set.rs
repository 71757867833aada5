//! `berth setting set KEY VALUE`

use berth_proto::pb;
use clap::Args;

use crate::context::Ctx;
use crate::output::{self, CliError};

/// Arguments of `berth setting set`.
#[derive(Args, Debug)]
pub struct SetArgs {
    /// The setting (`berth setting list` shows every one and what it accepts).
    pub key: String,
    /// Its new value. It may start with `-` (a command such as `-x`, or `-1`,
    /// which the daemon judges): only berth's own flags are read as flags.
    #[arg(allow_hyphen_values = true)]
    pub value: String,
}

/// Runs `berth setting set`.
pub async fn cmd_setting_set(ctx: &mut Ctx, args: SetArgs) -> Result<(), CliError> {
    let req = pb::SettingRequest {
        key: args.key,
        value: args.value,
    };
    let reply = ctx
        .unary(req, |mut c, r| async move { c.set_setting(r).await })
        .await?;
    if ctx.json {
        output::json(&super::setting_json(&reply.key, reply.value.as_deref()))
    } else {
        output::text(&format!(
            "{} = {}\n",
            reply.key,
            berth_vocab::text::escaped(&reply.value.unwrap_or_default())
        ))
    }
}
