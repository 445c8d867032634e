// Driven from the e2e (e2e/rig/site-settings.ts), which opens this page and calls these.
window.setMicrophone = (pattern, setting) =>
  chrome.contentSettings.microphone.set({ primaryPattern: pattern, setting });
window.getMicrophone = (url) =>
  new Promise((resolve) =>
    chrome.contentSettings.microphone.get({ primaryUrl: url }, (d) => resolve(d.setting)),
  );
