fn main() {
    eprintln!("micoff-host: skeleton");
}
