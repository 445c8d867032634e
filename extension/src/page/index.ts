// MAIN-world content script (page.js), document_start, every frame. Placeholder: the release-on-mute
// feature (issue 4) interposes getUserMedia here. Hostile territory: capture originals first.
export {};
