/**
 * The name visitors see for a portal user acting as an agent — on their messages (`author.name`) and in notices
 * such as "Dana (a human agent) joined the conversation" — and agents see in the inbox: the display name they were
 * given (`users create --name`, or the portal's profile and users pages), else the part of their email before the `@`.
 */
export function displayNameOf(user: { name: string | null; email: string }): string {
  return user.name ?? user.email.split('@')[0]!;
}
