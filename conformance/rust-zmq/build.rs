// Bake an rpath to the libzmq we link (LIBZMQ_PREFIX/lib, i.e. ferromq's dist) into the binary,
// so it loads that library rather than a system libzmq.so.5.
fn main() {
    println!("cargo:rerun-if-env-changed=LIBZMQ_PREFIX");
    if let Ok(prefix) = std::env::var("LIBZMQ_PREFIX") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{prefix}/lib");
    }
}
