// Insertable-streams meeting: mic -> MediaStreamTrackProcessor -> gain transform ->
// MediaStreamTrackGenerator -> sender, through loopback.js's call. Query `link`: `worker` (default; the
// readable and writable transferred to a worker that pipes them through the transform), `page` (the same
// pipe in the page), `own` (page code reads the processor and writes the generator itself).
// Same window API as meeting.js, plus call.processor, call.out (the generator; the pipeline's mute is
// call.out.enabled = false), call.frames (frames through the transform) and call.pipeError.

async function start() {
  const link = new URLSearchParams(location.search).get('link') ?? 'worker';
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const track = stream.getAudioTracks()[0];
  call.stream = stream;
  call.track = track;
  call.frames = 0;
  call.pipeError = null;
  const processor = new MediaStreamTrackProcessor({ track });
  const out = new MediaStreamTrackGenerator({ kind: 'audio' });
  Object.assign(call, { processor, out, readable: processor.readable, writable: out.writable });
  const broke = (e) => {
    call.pipeError = String(e);
  };
  if (link === 'worker') {
    const worker = new Worker('insertable-worker.js');
    worker.onmessage = (e) => {
      if (e.data.error) broke(e.data.error);
      else call.frames = e.data.frames;
    };
    worker.postMessage({ readable: processor.readable, writable: out.writable }, [
      processor.readable,
      out.writable,
    ]);
    call.worker = worker;
  } else if (link === 'page') {
    processor.readable
      .pipeThrough(
        gainTransform(0.9, () => {
          call.frames++;
        }),
      )
      .pipeTo(out.writable)
      .catch(broke);
  } else {
    const reader = processor.readable.getReader();
    const writer = out.writable.getWriter();
    (async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        call.frames++;
        await writer.write(value);
      }
    })().catch(broke);
  }
  await connectLoopback(out, new MediaStream([out]));
}

startCall('insertable meeting', start);
