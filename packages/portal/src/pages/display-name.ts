import type { PortalUserView } from '@parley/wire-types';
import { api, type SessionInfo } from '../api.ts';
import type { FieldSpec } from '../components/form.ts';

/** The most a display name may have (the server's rule: users.errors.ts NAME_MAX_LENGTH). */
const NAME_MAX = 80;

/** The display-name field of the profile and users pages. */
export function nameField(value: string | null): FieldSpec {
  return {
    name: 'name',
    label: 'Display name',
    value: value ?? '',
    maxLength: NAME_MAX,
    autocomplete: 'name',
    hint: 'What visitors see on your messages and in “… joined the conversation”. Leave it empty to show the part of the email before the @.',
  };
}

/** Saves a user's display name (empty: none) and, when it is the signed-in user's own, updates the session. */
export async function saveName(userId: string, value: string, session: SessionInfo): Promise<PortalUserView> {
  const saved = await api<PortalUserView>('PATCH', `/users/${encodeURIComponent(userId)}`, {
    name: value.trim() === '' ? null : value,
  });
  if (userId === session.user.id) {
    session.user.name = saved.name;
    window.dispatchEvent(new Event('portal:session-changed'));
  }
  return saved;
}

/** How the portal names a user: their display name, else the part of the email before the @ (as visitors see it). */
export const shownName = (user: { name: string | null; email: string }): string =>
  user.name ?? user.email.split('@')[0]!;
