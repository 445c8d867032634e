// Transparency probe, added to a meeting page (meeting.html or webaudio.html) by the release specs: it
// hangs every consumer the issue lists on the page's mic track BEFORE the release, records every event
// the page could see, and reports what the page can observe. window.probe.{attach, snap, levels, events};
// watch and trackSnap alone record events and read a track without attaching any consumer.

window.probe = (() => {
  const events = [];
  const consumers = {};
  let base = null;

  function rms(analyser) {
    const buf = new Float32Array(analyser.fftSize);
    analyser.getFloatTimeDomainData(buf);
    let s = 0;
    for (const v of buf) s += v * v;
    return Math.sqrt(s / buf.length);
  }

  // Every event the page could see on its tracks and streams, named `<name>:<type>`. Used alone (no
  // consumers attached) by the path mutes of release-paths.spec.ts.
  function watch({ tracks = {}, streams = {} }) {
    for (const [name, t] of Object.entries(tracks)) {
      for (const type of ['ended', 'mute', 'unmute'])
        t.addEventListener(type, () => events.push(`${name}:${type}`));
    }
    for (const [name, s] of Object.entries(streams)) {
      for (const type of ['inactive', 'active', 'addtrack', 'removetrack'])
        s.addEventListener(type, () => events.push(`${name}:${type}`));
    }
  }

  // What the page reads off a track.
  function trackSnap(track) {
    return {
      id: track.id,
      label: track.label,
      kind: track.kind,
      readyState: track.readyState,
      enabled: track.enabled,
      muted: track.muted,
      settings: track.getSettings(),
      constraints: track.getConstraints(),
      capabilities: track.getCapabilities(),
    };
  }

  async function attach({ track, stream, sender }) {
    // A page whose sender carries something else (webaudio.html) gets a sender of its own for the mic.
    if (!sender) sender = new RTCPeerConnection().addTrack(track, stream);
    watch({ tracks: { track }, streams: { stream } });
    const ctx = new AudioContext();
    await ctx.resume().catch(() => {});
    const analyser = (node) => {
      const a = ctx.createAnalyser();
      a.fftSize = 2048;
      node.connect(a);
      return a;
    };
    // WebAudio, both ways of making a source node.
    const node1 = ctx.createMediaStreamSource(stream);
    const node2 = new MediaStreamAudioSourceNode(ctx, { mediaStream: stream });
    // A media element playing the stream. Chromium routes no MediaStream element into WebAudio
    // (createMediaElementSource stays silent), so the spec listens to the rig's output sink instead.
    // Muted until the spec listens to it (probe.audible): what it plays is the mic's own signal, and
    // Chromium's echo canceller, which takes everything the browser plays for echo, removes the mic
    // from the track once it has converged on that.
    const el = document.createElement('audio');
    el.muted = true;
    el.srcObject = stream;
    document.body.append(el);
    await el.play().catch((e) => events.push(`element:play-failed:${e.name}`));
    // A clone (disabled with the original by the specs' mute) and a source node on it.
    const clone = track.clone();
    const cloneStream = new MediaStream([clone]);
    // Streams the page builds itself around the mic must not see the release either.
    const ownStream = new MediaStream([track]);
    for (const [name, s] of [
      ['cloneStream', cloneStream],
      ['ownStream', ownStream],
    ]) {
      for (const type of ['inactive', 'active'])
        s.addEventListener(type, () => events.push(`${name}:${type}`));
    }
    const cloneNode = ctx.createMediaStreamSource(cloneStream);
    // A MediaRecorder made before the release, started after the resume.
    const recorder = new MediaRecorder(stream);
    const chunks = [];
    const blobs = [];
    recorder.ondataavailable = (e) => {
      chunks.push(e.data.size);
      blobs.push(e.data);
    };
    recorder.onerror = (e) => events.push(`recorder:error:${e.error?.name}`);
    Object.assign(consumers, {
      ctx,
      track,
      stream,
      sender,
      node1,
      node2,
      el,
      clone,
      cloneStream,
      ownStream,
      recorder,
      chunks,
      blobs,
      a1: analyser(node1),
      a2: analyser(node2),
      aClone: analyser(cloneNode),
    });
    base = snap();
    return base;
  }

  function snap() {
    const { track, stream, sender, node1, node2, el, clone, recorder } = consumers;
    return {
      ...trackSnap(track),
      streamActive: stream.active,
      streamTracksSame: stream.getTracks().length === 1 && stream.getTracks()[0] === track,
      streamById: stream.getTrackById(track.id) === track,
      senderSame: sender ? sender.track === track : null,
      senderInList: sender ? sender.transport !== undefined : null,
      node1Stream: node1.mediaStream === stream,
      node2Stream: node2.mediaStream === stream,
      elementSrc: el.srcObject === stream,
      ownStreamActive: consumers.ownStream.active,
      cloneStreamActive: consumers.cloneStream.active,
      recorderStream: recorder.stream === stream,
      cloneState: { readyState: clone.readyState, enabled: clone.enabled, label: clone.label },
      isTrack:
        track instanceof MediaStreamTrack && Object.getPrototypeOf(track) === MediaStreamTrack.prototype,
      nativeLooking: /\[native code\]/.test(
        Function.prototype.toString.call(navigator.mediaDevices.getUserMedia),
      ),
    };
  }

  // RMS of what the MediaRecorder recorded (its chunks decoded as one file): silence is 0.
  async function recordedRms() {
    const blob = new Blob(consumers.blobs, { type: consumers.recorder.mimeType });
    const audio = await consumers.ctx.decodeAudioData(await blob.arrayBuffer());
    const data = audio.getChannelData(0);
    let s = 0;
    for (const v of data) s += v * v;
    return { rms: data.length ? Math.sqrt(s / data.length) : 0, seconds: audio.duration };
  }

  // The media element heard (true) or playing muted (false).
  function audible(on) {
    consumers.el.muted = !on;
  }

  function levels() {
    const c = consumers;
    return { node1: rms(c.a1), node2: rms(c.a2), clone: rms(c.aClone) };
  }

  return {
    attach,
    watch,
    trackSnap,
    snap,
    levels,
    audible,
    recordedRms,
    events,
    consumers,
    get base() {
      return base;
    },
  };
})();
