//! Compiles `proto/berth.proto` with protox, so no system `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/berth.proto"];
    // protox never calls protoc, so cargo cannot learn the inputs by itself.
    for f in files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
