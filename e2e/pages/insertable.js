// Insertable-streams meeting: mic -> MediaStreamTrackProcessor -> gain transform ->
// MediaStreamTrackGenerator -> sender, through the loopback call of loopback.js. Query `link`:
//   worker (default): the processor's readable and the generator's writable are transferred together to
//                     a worker that pipes one into the other through the transform
//   page:             the same transform piped in the page (readable.pipeThrough(t).pipeTo(writable))
//   own:              page code reads the processor and writes the generator itself (no pipe)
// Same window API as meeting.js, plus call.processor, call.out (the generator: what the call sends; the
// pipeline's mute is call.out.enabled = false), call.frames (frames through the transform so far) and
// call.pipeError (a pipeline that broke).

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
