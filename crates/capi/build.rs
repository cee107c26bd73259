//! Gives the shared library libzmq's soname, so programs linked against it record
//! `libzmq.so.5` and load whichever implementation is installed under that name.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if os != "macos" && os != "windows" && os != "ios" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libzmq.so.5");
    }
}
