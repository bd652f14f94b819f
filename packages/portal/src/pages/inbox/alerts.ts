import { h } from '../../dom.ts';

const SOUND_KEY = 'parley.inbox.sound';

/**
 * How the inbox gets an agent's attention (docs/routing.md "Notifications"): a browser notification (permission is
 * asked only from the agent's click, as browsers require), a count in the tab title until the agent looks, and a
 * short tone that can be turned off (the choice is kept in this browser's localStorage).
 */
export class InboxAlerts {
  private unseen = 0;
  private readonly baseTitle = document.title;
  private audio: AudioContext | undefined;
  readonly controls: HTMLElement;

  constructor() {
    const enable = h(
      'button',
      { type: 'button', class: 'secondary', hidden: !canAsk() },
      'Enable notifications',
    );
    enable.addEventListener('click', async () => {
      await Notification.requestPermission();
      enable.hidden = !canAsk();
    });
    const sound = h('input', { type: 'checkbox', id: 'inbox-sound', checked: soundOn() });
    sound.addEventListener('change', () => localStorage.setItem(SOUND_KEY, sound.checked ? 'on' : 'off'));
    this.controls = h(
      'div',
      { class: 'inbox-alerts' },
      enable,
      h('label', { for: 'inbox-sound', class: 'inline' }, sound, ' Sound'),
    );
    const seen = () => {
      if (document.visibilityState === 'visible') this.clear();
    };
    document.addEventListener('visibilitychange', seen);
  }

  /** One alert: a notification (when allowed), the title count and the tone. Clicking it opens `onOpen`. */
  notify(title: string, body: string, tag: string, onOpen: () => void): void {
    this.unseen++;
    document.title = `(${this.unseen}) ${this.baseTitle}`;
    if (typeof Notification !== 'undefined' && Notification.permission === 'granted') {
      const note = new Notification(title, { body, tag });
      note.addEventListener('click', () => {
        window.focus();
        onOpen();
        note.close();
      });
    }
    if (soundOn()) this.beep();
  }

  /** The agent looked: the title loses its count. */
  clear(): void {
    this.unseen = 0;
    document.title = this.baseTitle;
  }

  private beep(): void {
    try {
      this.audio ??= new AudioContext();
      const tone = this.audio.createOscillator();
      const gain = this.audio.createGain();
      tone.frequency.value = 880;
      gain.gain.value = 0.05;
      tone.connect(gain).connect(this.audio.destination);
      tone.start();
      tone.stop(this.audio.currentTime + 0.15);
    } catch {
      // No audio output (or not allowed before a click): the notification and title still tell.
    }
  }
}

const canAsk = () => typeof Notification !== 'undefined' && Notification.permission === 'default';

function soundOn(): boolean {
  try {
    return localStorage.getItem(SOUND_KEY) !== 'off';
  } catch {
    return true;
  }
}
