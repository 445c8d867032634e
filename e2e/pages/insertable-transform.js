// The insertable pipeline's transform (insertable.js), loaded by the page and by its worker
// (insertable-worker.js): a gain applied to every frame, copied into a new AudioData as a noise
// suppressor would. `onFrame` counts the frames that went through.
// biome-ignore lint/correctness/noUnusedVariables: used by insertable.js and insertable-worker.js (classic scripts)
function gainTransform(gain, onFrame) {
  return new TransformStream({
    transform(frame, controller) {
      const n = frame.numberOfFrames;
      const channels = frame.numberOfChannels;
      const data = new Float32Array(n * channels);
      for (let c = 0; c < channels; c++) {
        frame.copyTo(data.subarray(c * n, (c + 1) * n), { planeIndex: c, format: 'f32-planar' });
      }
      for (let i = 0; i < data.length; i++) data[i] *= gain;
      controller.enqueue(
        new AudioData({
          format: 'f32-planar',
          sampleRate: frame.sampleRate,
          numberOfFrames: n,
          numberOfChannels: channels,
          timestamp: frame.timestamp,
          data,
        }),
      );
      frame.close();
      onFrame();
    },
  });
}
