// The insertable pipeline's worker (insertable.js, link=worker): the processor's readable and the
// generator's writable arrive together; frames go through the gain transform. Every 10th frame it tells
// the page how many went through (call.frames).
importScripts('insertable-transform.js');

let frames = 0;
self.onmessage = (e) => {
  const { readable, writable } = e.data;
  readable
    .pipeThrough(
      gainTransform(0.9, () => {
        frames++;
        if (frames % 10 === 0) self.postMessage({ frames });
      }),
    )
    .pipeTo(writable)
    .catch((err) => self.postMessage({ error: String(err) }));
};
