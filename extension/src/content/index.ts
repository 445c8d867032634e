// Isolated-world content script (content.js): bridge page <-> background. Placeholder for issue 4.
export {};
