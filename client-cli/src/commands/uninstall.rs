//! `berth uninstall <client>`: removes exactly what `berth install` added.

use clap::Args;

use crate::context::Ctx;
use crate::output::CliError;
use crate::relay::RootsFrom;
use berth_install::files::Action;
use berth_install::{Client, Scope};

/// Arguments of `berth uninstall`.
#[derive(Args, Debug)]
pub struct UninstallArgs {
    /// The client to unregister from.
    #[arg(value_enum)]
    pub client: Client,
    /// Print the change as a unified diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The user's configuration, or the project in the current directory.
    #[arg(long, value_enum, default_value = "user")]
    pub scope: Scope,
    /// Remove only the server that `berth install --exec NAME` registered.
    #[arg(long, value_name = "NAME")]
    pub exec: Option<String>,
}

/// Runs `berth uninstall`.
pub async fn cmd_uninstall(ctx: &mut Ctx, args: UninstallArgs) -> Result<(), CliError> {
    let wrapped = match args.exec {
        Some(name) => Some(super::install::wrapped(name, Vec::new(), RootsFrom::Home)?),
        None => None,
    };
    super::install::run(
        ctx,
        args.client,
        args.scope,
        args.dry_run,
        Action::Uninstall,
        wrapped.as_ref(),
    )
}
